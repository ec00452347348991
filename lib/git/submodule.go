package git

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Submodules lists the paths (slash paths) of the submodules rev's
// .gitmodules names (its submodule.<name>.path keys, read by git
// itself); none when it names none, or rev has no .gitmodules (git's
// exit 1 for both). Errors: git's.
func (r *Repo) Submodules(rev string) ([]string, error) {
	out, err := r.Run("config", "--blob", rev+":.gitmodules", "-z", "--get-regexp", `^submodule\..*\.path$`)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return nil, nil // no key matched
	}
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range splitZ(out) {
		// -z: the key, a newline, the value.
		if _, p, ok := strings.Cut(rec, "\n"); ok && p != "" {
			paths = append(paths, strings.TrimSuffix(filepath.ToSlash(p), "/"))
		}
	}
	return paths, nil
}

// Submodule is a submodule's work tree as it stands (SubmoduleAt): the
// tracked paths whose content differs from the submodule's own HEAD
// (changed, staged, removed), and every path git would not commit there
// (untracked or ignored, a directory whole as "dir/"), relative to the
// submodule.
type Submodule struct {
	Path     string // the submodule's path in the work tree
	Head     string // its HEAD commit ("" when it has none)
	Modified []string
	Others   []string
}

// SubmoduleAt reads the submodule checked out at path (a slash path
// relative to the work tree): ok is false when none is (not initialised,
// or not a repository). The superproject's commit records the
// submodule's commit alone, so what differs from that commit in its work
// tree is in no commit of the run. Errors: git's.
func (r *Repo) SubmoduleAt(path string) (s Submodule, ok bool, err error) {
	dir := filepath.Join(r.root, filepath.FromSlash(path))
	top, err := run(dir, nil, "rev-parse", "--show-toplevel")
	if err != nil || filepath.Clean(strings.TrimSpace(string(top))) != filepath.Clean(dir) {
		return s, false, nil
	}
	s.Path = path
	if head, err := run(dir, nil, "rev-parse", "-q", "--verify", "HEAD^{commit}"); err == nil {
		s.Head = strings.TrimSpace(string(head))
	}
	out, err := run(dir, nil, "status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=none", "--no-renames")
	if err != nil {
		return s, false, err
	}
	for _, e := range splitZ(out) {
		if len(e) > 3 {
			s.Modified = append(s.Modified, e[3:])
		}
	}
	if out, err = run(dir, nil, "ls-files", "-z", "--others", "--directory"); err != nil {
		return s, false, err
	}
	s.Others = splitZ(out)
	return s, true, nil
}

// PutBack makes the tracked files of the submodule at path (a slash path)
// what its HEAD holds, its index too (`git reset --hard`): runner-start
// begins a run only on a clean work tree, submodules included, so a
// change there is a session's. Untracked files stay. Errors: git's.
func (r *Repo) PutBack(path string) error {
	_, err := run(filepath.Join(r.root, filepath.FromSlash(path)), nil, "reset", "-q", "--hard")
	return err
}

// Gitlink is the commit rev records at path (a submodule), "" when rev
// records none there. Errors: git's.
func (r *Repo) Gitlink(rev, path string) (string, error) {
	out, err := r.Run("ls-tree", "-z", rev, "--", path)
	if err != nil {
		return "", err
	}
	// "160000 commit <id>\t<path>"
	head, p, ok := strings.Cut(strings.TrimSuffix(string(out), "\x00"), "\t")
	f := strings.Fields(head)
	if !ok || p != path || len(f) != 3 || f[1] != "commit" {
		return "", nil
	}
	return f[2], nil
}

// PutBackCommit checks out commit, detached, in the submodule at path,
// its tracked files with it (`git checkout --force --detach`). A
// submodule whose repository lacks commit (a session put a repository of
// its own there) has its .git moved under keep and is checked out again
// from the superproject's git directory (`git submodule update --init
// --force`, which needs .gitmodules to name it). Errors: git's, when
// neither works.
func (r *Repo) PutBackCommit(path, commit, keep string) error {
	dir := filepath.Join(r.root, filepath.FromSlash(path))
	if _, err := run(dir, nil, "checkout", "-q", "--force", "--detach", commit); err == nil {
		return nil
	}
	if _, err := r.unembed(path, keep); err != nil {
		return err
	}
	_, err := r.Run("-c", "protocol.allow=never", "submodule", "update", "-q", "--init", "--force", "--checkout", "--", path)
	return err
}

// ClearSubmodule moves what the directory of the submodule at path holds
// under keep (as <path>.files, or .files.2 and on) and leaves it empty, as
// an uninitialised submodule is: for a submodule a session took the
// repository of, or moved to a commit it cannot be checked out at again.
// It returns where the files went, "" when it held none. Errors: the
// directory cannot be read or moved.
func (r *Repo) ClearSubmodule(path, keep string) (string, error) {
	dir := filepath.Join(r.root, filepath.FromSlash(path))
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) == 0 {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return "", err
	}
	to := filepath.Join(keep, filepath.FromSlash(path)+".files")
	for n := 2; ; n++ {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			break
		}
		to = filepath.Join(keep, filepath.FromSlash(path)+fmt.Sprintf(".files.%d", n))
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return "", fmt.Errorf("submodule %s: %w", path, err)
	}
	if err := os.Rename(dir, to); err != nil {
		return "", fmt.Errorf("submodule %s: move its files: %w", path, err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", fmt.Errorf("submodule %s: %w", path, err)
	}
	return to, nil
}
