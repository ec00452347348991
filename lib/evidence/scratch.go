package evidence

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/git"
)

// Scratch is the witness's checkout, under the repository's git
// directory: a plain directory (no worktree registered) that holds one
// commit's files with some of the work tree's laid over them, and links
// to the work tree's dependency directories (node_modules, a virtual
// environment), at the same path every time so that build caches keyed
// by path still serve.
type Scratch struct {
	Dir   string // the checkout
	Index string // the index file git checks out through
}

// ScratchFor is the scratch of the repository whose git directory (the
// worktree's own) is gitDir.
func ScratchFor(gitDir string) Scratch {
	base := filepath.Join(gitDir, "treeloop")
	return Scratch{Dir: filepath.Join(base, "witness"), Index: filepath.Join(base, "witness.index")}
}

// Prepare empties the scratch and fills it: rev's files, then each of
// files (repository-relative) as the work tree at root has it (removed
// when the work tree has none), then a link to each of links in the work
// tree. Errors: git cannot check rev out, a file cannot be copied.
func (s Scratch) Prepare(repo *git.Repo, rev, root string, files, links []string) error {
	if err := removeAll(s.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	if err := repo.CheckoutTree(rev, s.Dir, s.Index); err != nil {
		return err
	}
	for _, f := range files {
		if err := copyPath(filepath.Join(root, filepath.FromSlash(f)), filepath.Join(s.Dir, filepath.FromSlash(f))); err != nil {
			return err
		}
	}
	for _, l := range links {
		dst := filepath.Join(s.Dir, filepath.FromSlash(l))
		if _, err := os.Lstat(dst); err == nil {
			continue // the commit has it: leave the commit's
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(filepath.Join(root, filepath.FromSlash(l)), dst); err != nil {
			return err
		}
	}
	return nil
}

// removeAll is os.RemoveAll that also removes read-only directories (a
// test may leave one, as Go's module cache does).
func removeAll(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// copyPath copies the file, symbolic link or nothing at src to dst: a
// missing src removes dst.
func copyPath(src, dst string) error {
	st, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return removeAll(dst)
	}
	if err != nil {
		return err
	}
	if err := removeAll(dst); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case !st.Mode().IsRegular():
		return nil // a directory: its files are listed on their own
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Links are the paths of the work tree the scratch links to, from git's
// list of ignored paths ("dir/" for a whole directory): every directory
// of installed dependencies (node_modules, a virtual environment) at any
// depth, and every other ignored entry at the top but the build outputs
// and caches (a session's, which the witness must not read) and the
// runner's own.
func Links(ignored []string) []string {
	var out []string
	for _, p := range ignored {
		dir := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		base := path.Base(p)
		switch {
		case p == "" || strings.HasPrefix(p, ".runner") || strings.HasPrefix(p, ".git"):
		case dir && (base == "node_modules" || base == ".venv" || base == "venv"):
			out = append(out, p)
		case !strings.Contains(p, "/") && !buildOutput(p) && !scratchSkip[base]:
			out = append(out, p)
		}
	}
	return out
}

// scratchSkip are top-level names of build outputs and caches the scratch
// does not link to.
var scratchSkip = map[string]bool{
	"target": true, "build": true, "dist": true, "out": true, "__pycache__": true,
	".mypy_cache": true, ".ruff_cache": true, ".tox": true, ".nox": true,
	"coverage": true, ".coverage": true, "htmlcov": true, ".next": true, ".nuxt": true,
	".turbo": true, ".parcel-cache": true, ".cache": true, ".gradle": true,
}
