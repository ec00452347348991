// Package seal holds a directory's files across a session that must not
// change them (issue 17): Take reads every file under the directory before
// an agent or a guard runs, Restore afterwards writes back what was
// changed or deleted, removes what was added and says so. The runner uses
// it for the run's iteration directories (begin.json, the tree snapshot,
// agent.json, the logs of earlier iterations, ...), which live outside git
// yet are read after the session: what the runner reads there is what it
// wrote, never what the session left.
package seal

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// MaxKept is the size up to which a file's bytes are kept in memory, so a
// change can be put back; a larger file (a long log) is held by its
// SHA-256: a change is reported, not restored.
const MaxKept = 4 << 20

type entry struct {
	dir  bool
	link string // a symbolic link's target (data nil)
	mode fs.FileMode
	data []byte // nil when the file is larger than MaxKept
	sum  [sha256.Size]byte
	size int64
}

// Seal is a directory's contents at Take.
type Seal struct {
	root  string
	skip  func(rel string) bool
	files map[string]entry // by slash path relative to root
}

// Take reads every directory, regular file and symbolic link (by its
// target) under root; other special files are not sealed. A missing root seals an
// empty directory. skip (may be nil) names the paths, by slash path
// relative to root, that are neither sealed nor restored: the files the
// caller itself writes during the session.
func Take(root string, skip func(rel string) bool) (*Seal, error) {
	if skip == nil {
		skip = func(string) bool { return false }
	}
	s := &Seal{root: root, skip: skip, files: map[string]entry{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch {
		case skip(rel):
			if d.IsDir() {
				return filepath.SkipDir
			}
		case d.IsDir():
			s.files[rel] = entry{dir: true, mode: 0o755}
		case d.Type().IsRegular():
			e, err := read(p)
			if err != nil {
				return err
			}
			s.files[rel] = e
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			s.files[rel] = entry{link: target}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("seal %s: %w", root, fsutil.Cause(err))
	}
	return s, nil
}

func read(p string) (entry, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return entry{}, err
	}
	e := entry{mode: st.Mode().Perm(), size: st.Size()}
	if !st.Mode().IsRegular() {
		return entry{}, fmt.Errorf("%s is not a regular file", p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return entry{}, err
	}
	e.sum, e.size = sha256.Sum256(data), int64(len(data))
	if len(data) <= MaxKept {
		e.data = data
	}
	return e, nil
}

// Restore compares root with the seal and puts it back: a file changed,
// replaced or deleted is rewritten with its sealed bytes (when kept), a
// file or directory added is removed. It returns one line per path put back, sorted, naming it
// relative to root: "<rel> changed", "<rel> deleted", "<rel> added".
func (s *Seal) Restore() ([]string, error) {
	var notes []string
	// Added paths first, so a directory replaced by a file is cleared
	// before its sealed contents are written back.
	var added []string
	err := filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(s.root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		e, sealed := s.files[rel]
		switch {
		case sealed && e.link != "":
			if target, err := os.Readlink(p); err == nil && target == e.link {
				return nil
			}
		case sealed && e.dir == d.IsDir() && (e.dir || d.Type().IsRegular()):
			return nil
		case s.skip(rel):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case !sealed:
			added = append(added, rel)
		default: // the kind changed: a file where a directory was, a link where a file was
			added = append(added, rel)
		}
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", s.root, fsutil.Cause(err))
	}
	for _, rel := range added {
		if err := os.RemoveAll(filepath.Join(s.root, filepath.FromSlash(rel))); err != nil {
			return nil, err
		}
		if _, sealed := s.files[rel]; !sealed {
			notes = append(notes, rel+" added")
		}
	}
	rels := make([]string, 0, len(s.files))
	for rel := range s.files {
		rels = append(rels, rel)
	}
	slices.Sort(rels) // parents before children
	for _, rel := range rels {
		e := s.files[rel]
		p := filepath.Join(s.root, filepath.FromSlash(rel))
		if e.link != "" {
			if target, err := os.Readlink(p); err != nil || target != e.link {
				notes = append(notes, rel+" changed")
				if err := os.RemoveAll(p); err != nil {
					return nil, err
				}
				if err := os.Symlink(e.link, p); err != nil {
					return nil, err
				}
			}
			continue
		}
		if e.dir {
			if st, err := os.Lstat(p); err != nil || !st.IsDir() {
				if err := os.MkdirAll(p, e.mode); err != nil {
					return nil, err
				}
				notes = append(notes, rel+"/ deleted")
			}
			continue
		}
		now, err := read(p)
		switch {
		case err == nil && now.sum == e.sum:
			continue
		case err == nil || slices.Contains(added, rel):
			notes = append(notes, rel+" changed")
		case errors.Is(err, fs.ErrNotExist):
			notes = append(notes, rel+" deleted")
		default:
			notes = append(notes, rel+" changed")
		}
		if e.data == nil {
			notes[len(notes)-1] += " (too large to restore)"
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return nil, err
		}
		if err := fsutil.WriteAtomic(p, e.data, e.mode); err != nil {
			return nil, err
		}
	}
	slices.Sort(notes)
	return slices.Compact(notes), nil
}
