package git

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// MaxOutsideCopy bounds what StageOutsideLinks copies in place of the
// symbolic links of one staging: bytes, and files.
const (
	MaxOutsideCopy      = 64 << 20
	MaxOutsideCopyFiles = 10000
)

// Outside is one symbolic link, made by a session, to a file or directory
// outside the work tree, replaced by a copy of what it pointed to.
type Outside struct {
	Path   string // slash path of the link in the work tree
	Target string // where it pointed, every link followed
	Copied bool   // false: left a link (StageOutsideLinks' mayCopy said no)
	// Uncommitted: the target lies in the work tree but the commit would
	// not hold it (git ignores it, or it is under a directory named .git).
	Uncommitted bool
}

// newLinks are the paths changes stage as symbolic links (mode 120000):
// `git diff --raw` lists a link only where rev's tree does not hold it as
// it is, new or pointing elsewhere.
func newLinks(changes []StagedChange) []string {
	var paths []string
	for _, c := range changes {
		if c.Mode == "120000" {
			paths = append(paths, c.Path)
		}
	}
	return paths
}

// StageOutsideLinks stages, in place of each symbolic link that changes
// (StagedChanges(rev)) stage new or changed and that leads out of the work
// tree (an absolute target, one that climbs out, or one through another
// link that does), a copy of what it leads to: a file's bytes (its
// executable bit kept) or a directory's files, the links inside it kept
// as links (and replaced in turn, in a next round, where they lead out).
// The guard read that content through the link; a clone of the commit
// would have the link alone. A link that leads nowhere (dangling) or to
// something else (a device, a socket) stays. The copy is made in tmp (a
// directory on the work tree's filesystem, outside it) and moved over the
// link, and the work tree is staged again. Only when mayCopy says so, asked
// once, at the first link out: the runner must copy nothing the sessions
// could not read (under a sandbox, the home directory it hides); a link
// out then stays, and is returned with Copied false. It returns the changes
// staged in the end and the links out. Errors: more than MaxOutsideCopy
// bytes or MaxOutsideCopyFiles files to copy in all (what is left then
// stays a link), more than MaxUnembedRounds rounds, a copy that fails, or
// git's.
func (r *Repo) StageOutsideLinks(rev, tmp string, changes []StagedChange, mayCopy func() bool) ([]StagedChange, []Outside, error) {
	var replaced []Outside
	var budget copyBudget
	root := ""
	copying := 0 // 1 yes, -1 no, 0 not asked
	for round := 0; ; round++ {
		paths := newLinks(changes)
		if len(paths) == 0 {
			return changes, replaced, nil
		}
		if root == "" {
			var err error
			if root, err = filepath.EvalSymlinks(r.root); err != nil {
				return changes, replaced, err
			}
		}
		n := len(replaced)
		for _, p := range paths {
			link := filepath.Join(r.root, filepath.FromSlash(p))
			real, err := filepath.EvalSymlinks(link)
			if err != nil {
				continue // dangling, or a loop: nothing was read through it
			}
			uncommitted := false
			if fsutil.Inside(real, root) {
				rel, err := filepath.Rel(root, real)
				if err != nil {
					return changes, replaced, err
				}
				held, err := r.holds(filepath.ToSlash(rel))
				if err != nil {
					return changes, replaced, err
				}
				if held {
					continue // inside the work tree: the commit holds its target
				}
				uncommitted = true // the guard read it, the commit would not hold it
			}
			st, err := os.Stat(real)
			if err != nil || !(st.Mode().IsRegular() || st.IsDir()) {
				continue
			}
			if uncommitted {
				// The sessions could read it: no sandbox hid it.
			} else if copying == 0 {
				copying = -1
				if mayCopy() {
					copying = 1
				}
			}
			if copying < 0 && !uncommitted {
				replaced = append(replaced, Outside{Path: p, Target: real})
				continue
			}
			if round == MaxUnembedRounds {
				return changes, replaced, fmt.Errorf("symbolic links out of the work tree still staged after %d rounds: %s", round, p)
			}
			if err := budget.count(real, st); err != nil {
				return changes, replaced, fmt.Errorf("symbolic link %s to %s: %w", p, real, err)
			}
			if err := replaceLink(link, real, st, tmp); err != nil {
				return changes, replaced, err
			}
			replaced = append(replaced, Outside{Path: p, Target: real, Copied: true, Uncommitted: uncommitted})
		}
		if len(replaced) == n || !slices.ContainsFunc(replaced[n:], func(o Outside) bool { return o.Copied }) {
			return changes, replaced, nil
		}
		if err := r.AddAll(); err != nil {
			return changes, replaced, err
		}
		var err error
		if changes, err = r.StagedChanges(rev); err != nil {
			return changes, replaced, err
		}
	}
}

// copyBounds are MaxOutsideCopy and MaxOutsideCopyFiles (smaller in
// tests).
var copyBounds = struct{ bytes, files int64 }{MaxOutsideCopy, MaxOutsideCopyFiles}

// copyBudget counts what StageOutsideLinks would copy.
type copyBudget struct{ bytes, files int64 }

// count adds what lies at p (st its Stat) to b. Errors: past a bound.
func (b *copyBudget) count(p string, st fs.FileInfo) error {
	add := func(size int64) error {
		b.bytes += size
		b.files++
		if b.bytes > copyBounds.bytes || b.files > copyBounds.files {
			size := fmt.Sprintf("%d bytes", copyBounds.bytes)
			if copyBounds.bytes%(1<<20) == 0 {
				size = fmt.Sprintf("%d MiB", copyBounds.bytes>>20)
			}
			return fmt.Errorf("more than %s or %d files to copy in its place", size, copyBounds.files)
		}
		return nil
	}
	if !st.IsDir() {
		return add(st.Size())
	}
	return filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			return add(info.Size())
		}
		return nil
	})
}

// replaceLink puts a copy of real (st its Stat) where the link is: made
// in tmp, then renamed over the link (a file) or put there once the link
// is removed (a directory).
func replaceLink(link, real string, st fs.FileInfo, tmp string) error {
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if !sameDevice(tmp, filepath.Dir(link)) {
		tmp = filepath.Dir(link) // a rename does not cross filesystems
	}
	dir, err := os.MkdirTemp(tmp, ".treeloop-copy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	made := filepath.Join(dir, "c")
	if st.IsDir() {
		err = copyDir(real, made)
	} else {
		err = fsutil.CopyFile(real, made, execPerm(st.Mode()))
	}
	if err == nil && st.IsDir() {
		err = os.Remove(link)
	}
	if err == nil {
		err = os.Rename(made, link)
	}
	if err != nil {
		return fmt.Errorf("copy %s in place of the symbolic link %s: %w", real, link, err)
	}
	return nil
}

// execPerm is 0755 for a mode with an executable bit, else 0644.
func execPerm(mode fs.FileMode) fs.FileMode {
	if mode&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// copyDir copies the directory src to dst, new: directories and regular
// files, symbolic links as links (to the same target); other files are
// left out.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.Mkdir(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return fsutil.CopyFile(p, to, execPerm(info.Mode()))
		}
		return nil
	})
}

// sameDevice reports whether a and b are on one filesystem (false when
// either cannot be read).
func sameDevice(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false
	}
	da, oka := sa.Sys().(*syscall.Stat_t)
	db, okb := sb.Sys().(*syscall.Stat_t)
	return oka && okb && da.Dev == db.Dev
}

// holds reports whether the commit of the staged index holds rel (a
// slash path in the work tree, the target of a link): a file git stages,
// or a directory with one. Not one under a directory named .git (git
// skips every such directory) nor one git ignores (not staged).
func (r *Repo) holds(rel string) (bool, error) {
	if rel == "." {
		return true, nil
	}
	for _, e := range strings.Split(rel, "/") {
		if e == ".git" {
			return false, nil
		}
	}
	out, err := runEnv(r.root, literal([]string{rel}), nil, "ls-files", "-z", "--cached", "--", rel)
	if err != nil {
		return false, err
	}
	return len(out) > 0, nil
}
