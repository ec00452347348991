package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Caches are the guard's private build caches (DESIGN.md decision 25,
// [guard] caches = "private"), under the repository's git directory
// (Root): Go's build cache, cargo's target directory and a TMPDIR emptied
// before every run (jest's transform cache lives there). Python's bytecode
// of the work tree is removed instead (RemoveBuildOutputs): a prefix for
// it (PYTHONPYCACHEPREFIX) would hide the interpreter's own precompiled
// library too, and every run would compile it again.
// Under a sandbox only the guard and the witness may write them; without
// one a session could, so the runner records their Digest after every
// guard run in a runner-owned file of the commit (layout.GuardCache) and
// empties them when they differ before the next.
type Caches struct {
	Root string
}

// CachesFor is the private caches of the repository whose git directory
// (the worktree's own) is gitDir.
func CachesFor(gitDir string) Caches {
	return Caches{Root: filepath.Join(gitDir, "treeloop", "guard-cache")}
}

// Env is the environment that points the toolchains at the caches.
func (c Caches) Env() []string {
	return []string{
		"GOCACHE=" + filepath.Join(c.Root, "go-build"),
		"CARGO_TARGET_DIR=" + filepath.Join(c.Root, "cargo-target"),
		"TMPDIR=" + c.tmp(),
	}
}

// WitnessEnv is Env for the witness, which runs beside the guard: the
// same Go build cache (keyed by content, safe to share), a cargo target
// directory and a TMPDIR of its own (cargo names a package's artifacts
// alike from any checkout, and one run would execute the other's).
func (c Caches) WitnessEnv() []string {
	return []string{
		"GOCACHE=" + filepath.Join(c.Root, "go-build"),
		"CARGO_TARGET_DIR=" + filepath.Join(c.Root, "cargo-target-witness"),
		"TMPDIR=" + c.witnessTmp(),
	}
}

func (c Caches) tmp() string        { return filepath.Join(c.Root, "tmp") }
func (c Caches) witnessTmp() string { return filepath.Join(c.Root, "tmp-witness") }

// Prepare makes the cache directories and empties the TMPDIRs. Errors: a
// directory cannot be made or emptied.
func (c Caches) Prepare() error {
	for _, d := range []string{c.tmp(), c.witnessTmp()} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	for _, d := range []string{"go-build", "cargo-target", "cargo-target-witness", "tmp", "tmp-witness"} {
		if err := os.MkdirAll(filepath.Join(c.Root, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Wipe removes the caches.
func (c Caches) Wipe() error {
	// The Go build cache's files are read-only: make them removable.
	filepath.WalkDir(c.Root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(c.Root)
}

// Digest is a digest of every entry under the caches but the TMPDIRs: its
// path, type, size, modification and change times and inode number. A
// change of any file, a file replaced or added, changes it; the change
// time cannot be set back by a process. "" when the caches do not exist.
// Errors: a directory cannot be read.
func (c Caches) Digest() (string, error) {
	d, _, err := c.digest(time.Time{})
	return d, err
}

// digest is Digest, and whether an entry was modified after now (the
// zero time: not asked).
func (c Caches) digest(now time.Time) (string, bool, error) {
	if _, err := os.Lstat(c.Root); os.IsNotExist(err) {
		return "", false, nil
	}
	future := false
	h := sha256.New()
	tmp, witnessTmp := c.tmp(), c.witnessTmp()
	err := filepath.WalkDir(c.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == tmp || p == witnessTmp {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !now.IsZero() && info.ModTime().After(now) {
			future = true
		}
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00%d", strings.TrimPrefix(p, c.Root), info.Mode(), info.Size(), info.ModTime().UnixNano())
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			fmt.Fprintf(h, "\x00%d\x00%d.%d", st.Ino, st.Ctim.Sec, st.Ctim.Nsec)
		}
		h.Write([]byte{'\n'})
		return nil
	})
	if err != nil {
		return "", false, err
	}
	return hex.EncodeToString(h.Sum(nil)), future, nil
}

// Verify compares the caches with the digest recorded after the guard last
// ran (want, "" when none was) and empties them when they differ: what the
// guard reads next is only what a guard or a witness wrote. With no digest
// recorded, caches that exist are emptied unless trusted (a sandbox kept
// every session away from them). Caches that cannot be read whole (a
// session made a directory unreadable) are emptied too, and so are caches
// with an entry modified later than now: a build tool that trusts
// modification times (cargo's fingerprints) would take a build whose time
// was set ahead for newer than any source the runner stamps as new
// (Touch), which a test of the guard's own run could do. wiped reports
// that they were emptied; the error is the emptying's.
func (c Caches) Verify(want string, trusted bool) (wiped bool, err error) {
	got, future, err := c.digest(time.Now())
	if err != nil || future {
		return true, c.Wipe()
	}
	if got == "" || got == want || want == "" && trusted {
		return false, nil
	}
	return true, c.Wipe()
}

// RemoveBuildOutputs removes, among ignored (git's list of ignored files
// and directories, "dir/" for a whole directory, relative to root) and
// inside the ignored directories, the build outputs and caches the guard
// would read without checking their sources, as a session may have left
// them: a .tsbuildinfo file, node_modules' .cache and .vite, Python's
// __pycache__ directories (bytecode is checked against its source's time
// and size, which a session sets at will) and a sourceless bytecode file
// (*.pyc outside __pycache__, which Python imports when its source is
// missing). Go's and cargo's outputs go to the private caches instead. The
// dependency directories (node_modules, virtual environments) are not
// walked. It returns what it removed, relative to root, sorted.
func RemoveBuildOutputs(root string, ignored []string) ([]string, error) {
	var removed []string
	for _, p := range ignored {
		dir := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		full := filepath.Join(root, filepath.FromSlash(p))
		if buildOutput(p) {
			if err := os.RemoveAll(full); err != nil {
				return removed, err
			}
			removed = append(removed, p)
			continue
		}
		if !dir {
			continue
		}
		err := filepath.WalkDir(full, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel := p + strings.TrimPrefix(filepath.ToSlash(q), filepath.ToSlash(full))
			switch {
			case buildOutput(rel):
				if err := os.RemoveAll(q); err != nil {
					return err
				}
				removed = append(removed, rel)
				if d.IsDir() {
					return filepath.SkipDir
				}
			case d.IsDir() && d.Name() == "node_modules":
				for _, sub := range []string{".cache", ".vite"} {
					if _, err := os.Lstat(filepath.Join(q, sub)); err == nil {
						if err := os.RemoveAll(filepath.Join(q, sub)); err != nil {
							return err
						}
						removed = append(removed, rel+"/"+sub)
					}
				}
				return filepath.SkipDir
			case d.IsDir() && dependencyDir(d.Name()):
				return filepath.SkipDir
			}
			return nil
		})
		if err != nil {
			return removed, err
		}
	}
	slices.Sort(removed)
	return removed, nil
}

// buildOutput reports a path RemoveBuildOutputs removes.
func buildOutput(p string) bool {
	base := path.Base(p)
	dir := path.Base(path.Dir(p))
	switch {
	case strings.HasSuffix(base, ".tsbuildinfo") || base == "__pycache__":
		return true
	case dir == "node_modules" && (base == ".cache" || base == ".vite"):
		return true
	}
	return (strings.HasSuffix(base, ".pyc") || strings.HasSuffix(base, ".pyo")) && dir != "__pycache__"
}

// dependencyDir reports a directory of installed dependencies, whose
// insides RemoveBuildOutputs leaves alone (but for node_modules' caches).
func dependencyDir(name string) bool {
	switch name {
	case ".venv", "venv", ".tox", ".nox", "site-packages", ".git", "target":
		return true
	}
	return false
}
