package git

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// MayRefuse reports whether git might refuse to stage a file at p (a
// slash path): a superset of git's own rule (verify_path, with
// core.protectNTFS and core.protectHFS), cheap enough to run on every
// changed path, so that Refused asks git only about these. A component
// with a backslash, a colon, a tilde or a byte outside ASCII, or that
// reads ".git" once lower-cased and stripped of trailing dots and spaces,
// or a name starting with ".git" (git refuses some as links), is one.
func MayRefuse(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." || c == ".." || strings.ContainsAny(c, `\:~`) {
			return true
		}
		for i := 0; i < len(c); i++ {
			if c[i] >= 0x80 || c[i] < 0x20 {
				return true
			}
		}
		if strings.HasPrefix(strings.TrimRight(strings.ToLower(c), ". "), ".git") {
			return true
		}
	}
	return false
}

// Refused lists, among paths (slash paths of files in the work tree, not
// in the index), those git refuses to stage, as `git add` would: each is
// added to an empty index of its own (`git update-index --add
// --info-only`, which writes no object), and those the index does not
// hold then are refused. Errors: git's.
func (r *Repo) Refused(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "treeloop-refused-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(tmp, "index")}
	in := strings.Join(paths, "\x00") + "\x00"
	if _, err := runEnv(r.root, env, []byte(in), "update-index", "--add", "--info-only", "-z", "--stdin"); err != nil {
		return nil, err
	}
	out, err := runEnv(r.root, env, nil, "ls-files", "-z")
	if err != nil {
		return nil, err
	}
	held := splitZ(out)
	var refused []string
	for _, p := range paths {
		if !slices.Contains(held, p) {
			refused = append(refused, p)
		}
	}
	return refused, nil
}

// MoveAway moves each of paths (slash paths in the work tree) to the same
// path under keep (an absolute directory, in the git directory), making
// its directories, and removes the directories left empty above it up to
// the work tree. What git refuses to stage can be in no commit: the guard
// must not run on it, and the step's staging would fail on it. Errors: a
// path that cannot be moved.
func (r *Repo) MoveAway(paths []string, keep string) error {
	for _, p := range paths {
		src := filepath.Join(r.root, filepath.FromSlash(p))
		dst := filepath.Join(keep, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Rename(src, dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if os.Remove(filepath.Join(r.root, filepath.FromSlash(dir))) != nil {
				break // not empty
			}
		}
	}
	return nil
}

// AddAllMoving is AddAll (`git add -A`) for a work tree that may hold
// files git refuses to stage (Refused): should git refuse, they are moved
// under keep (MoveAway) and the rest staged, so that a session cannot stop
// the step at its staging; moved lists them. Errors: git's, the first
// `git add -A`'s when no path was refused.
func (r *Repo) AddAllMoving(keep string) (moved []string, err error) {
	first := r.AddAll()
	if first == nil {
		return nil, nil
	}
	out, err := r.Run("ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return nil, first
	}
	var left []string
	for _, p := range splitZ(out) {
		if st, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p))); err == nil && !st.IsDir() {
			left = append(left, p)
		}
	}
	refused, err := r.Refused(left)
	if err != nil || len(refused) == 0 {
		return nil, first
	}
	if err := r.MoveAway(refused, keep); err != nil {
		return nil, err
	}
	return refused, r.AddAll()
}
