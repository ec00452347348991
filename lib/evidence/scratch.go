package evidence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/lazyre"
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
		dst := filepath.Join(s.Dir, filepath.FromSlash(f))
		if err := realDirs(s.Dir, filepath.Dir(dst)); err != nil {
			return err
		}
		if err := copyPath(filepath.Join(root, filepath.FromSlash(f)), dst); err != nil {
			return err
		}
	}
	for _, l := range links {
		dst := filepath.Join(s.Dir, filepath.FromSlash(l))
		if _, err := os.Lstat(dst); err == nil {
			continue // the commit has it: leave the commit's
		}
		if err := realDirs(s.Dir, filepath.Dir(dst)); err != nil {
			return err
		}
		src := filepath.Join(root, filepath.FromSlash(l))
		if path.Base(l) == "node_modules" {
			if err := linkModules(src, dst, root, s.Dir); err != nil {
				return err
			}
			continue
		}
		if err := os.Symlink(src, dst); err != nil {
			return err
		}
	}
	return nil
}

// linkModules makes dst a directory of links to the entries of the
// node_modules directory src (and of its @scope directories), with one
// exception: a workspace package, a link out of src to a directory of the
// work tree at root, links to the same directory in the scratch (top), so
// that the base code's tests import the base code's package, not the
// work tree's. Node resolves a package through its real path: a link to
// the whole of node_modules would lead every workspace import back into
// the work tree.
func linkModules(src, dst, root, top string) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	realSrc, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		from, to := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if e.IsDir() && strings.HasPrefix(e.Name(), "@") {
			if err := linkModules(from, to, root, top); err != nil {
				return err
			}
			continue
		}
		target := from
		if e.Type()&fs.ModeSymlink != 0 {
			if real, err := filepath.EvalSymlinks(from); err == nil {
				if rel, ok := inside(realRoot, real); ok && !within(realSrc, real) {
					target = filepath.Join(top, rel)
				}
			}
		}
		if err := os.Symlink(target, to); err != nil {
			return err
		}
	}
	return nil
}

// inside reports whether p lies in dir (both absolute and clean), and its
// path relative to dir.
func inside(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", false
	}
	return rel, true
}

// within reports whether p lies in dir.
func within(dir, p string) bool {
	_, ok := inside(dir, p)
	return ok
}

// EditablePaths are the directories the witness puts first on Python's
// path (PYTHONPATH): for every editable install of the work tree at root
// into a virtual environment among venvs (absolute paths), the scratch
// (top) counterparts of the work-tree directories its .pth file names
// ("/repo/src") or its import finder maps a package to ("/repo/src/pkg"
// gives "/repo/src"). A .pth file's directories come after PYTHONPATH's
// on sys.path: without them the base code's tests would import the work
// tree's package. Unreadable files are passed over.
func EditablePaths(root, top string, venvs []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string, parent bool) {
		p = filepath.Clean(p)
		if parent {
			p = filepath.Dir(p)
		}
		if rel, ok := inside(root, p); ok || p == root {
			if !ok {
				rel = "."
			}
			q := filepath.Join(top, rel)
			if !seen[q] {
				seen[q] = true
				out = append(out, q)
			}
		}
	}
	for _, v := range venvs {
		pths, _ := filepath.Glob(filepath.Join(v, "lib", "python*", "site-packages", "*.pth"))
		finders, _ := filepath.Glob(filepath.Join(v, "lib", "python*", "site-packages", "__editable__*finder.py"))
		for _, f := range pths {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(data), "\n") {
				if l = strings.TrimSpace(l); filepath.IsAbs(l) {
					add(l, false)
				}
			}
		}
		for _, f := range finders {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if m := editableMapping().FindSubmatch(data); m != nil {
				for _, q := range quotedPath().FindAllSubmatch(m[1], -1) {
					add(string(q[1]), true)
				}
			}
		}
	}
	return out
}

// editableMapping is the package map of setuptools' editable finder
// ("MAPPING: dict[str, str] = {'pkg': '/repo/src/pkg'}"); quotedPath an
// absolute path quoted in it.
var (
	editableMapping = lazyre.New(`(?m)^MAPPING[^=\n]*=\s*(\{[^}]*\})`)
	quotedPath      = lazyre.New(`['"](/[^'"]*)['"]`)
)

// realDirs makes dir (inside top) a real directory all the way down from
// top: a symbolic link on the way, which the checked-out commit may hold,
// is replaced by a directory, so that nothing written below dir lands
// outside the scratch.
func realDirs(top, dir string) error {
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("%s is not inside %s", dir, top)
	}
	cur := top
	for _, elem := range strings.Split(rel, string(filepath.Separator)) {
		if elem == "." || elem == "" {
			continue
		}
		cur = filepath.Join(cur, elem)
		st, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case st.IsDir():
		default: // a link or a file where a directory must be
			if err := os.Remove(cur); err != nil {
				return err
			}
			if err := os.Mkdir(cur, 0o755); err != nil {
				return err
			}
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
	return fsutil.CopyFile(src, dst, st.Mode().Perm())
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
