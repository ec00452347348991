// Package seal holds a directory's files across a session that must not
// change them: Take reads every file under the directory before
// an agent or a guard runs, Restore afterwards writes back what was
// changed or deleted, removes what was added and says so. The runner uses
// it for the run's iteration directories (begin.json, which names the
// tree snapshot, agent.json, the logs of earlier iterations, ...), which
// live outside git yet are read after the session: what the runner reads
// there is what it wrote, never what the session left.
package seal

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

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
	data []byte            // nil when the file is larger than MaxKept or indexed
	sum  [sha256.Size]byte // of a file not kept (data nil); see bytesSum
	size int64
	id   string      // an indexed file's copy in the store (data nil)
	fp   fingerprint // an indexed file's metadata; a directory's, when listedAs
	// listedAs: a directory whose listing Restore may take as unchanged
	// while its metadata is fp (takeDirs).
	listedAs bool
}

// Seal is a directory's contents at Take.
type Seal struct {
	root  string
	skip  func(rel string) bool
	files map[string]entry // by slash path relative to root
	store Store            // where indexed files are put back from (TakeIndexed)
	// byListing: directories' entries say which listings Restore may
	// take as unchanged (takeDirs).
	byListing bool
	plain     bool // plainRoot(root), taken once: Restore joins every path to it
}

// Take reads every directory, regular file and symbolic link (by its
// target) under root; other special files are not sealed. A missing root seals an
// empty directory. skip (may be nil) names the paths, by slash path
// relative to root, that are neither sealed nor restored: the files the
// caller itself writes during the session.
func Take(root string, skip func(rel string) bool) (*Seal, error) {
	return take(root, skip, func(_, p string, _ fs.FileInfo) (entry, bool, error) {
		e, err := read(p)
		return e, true, err
	})
}

// take walks root like Take; file gives each regular file's entry (rel,
// its absolute path, its Lstat), or false to leave it out.
func take(root string, skip func(rel string) bool, file func(rel, p string, st fs.FileInfo) (entry, bool, error)) (*Seal, error) {
	if skip == nil {
		skip = func(string) bool { return false }
	}
	s := &Seal{root: root, skip: skip, files: map[string]entry{}, plain: plainRoot(root)}
	err := walkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		rel := relTo(root, p)
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
			st, err := d.Info()
			if err != nil {
				return err
			}
			e, ok, err := file(rel, p, st)
			if err != nil {
				return err
			}
			if ok {
				s.files[rel] = e
			}
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

// walkDir is filepath.WalkDir for the seal's walks: the same visits in
// the same order, with the same errors, but a clean root's paths are
// joined to their names with a separator instead of filepath.Join,
// which cleaned every path again (at 200 iterations of a run's logs, a
// fifth of a seal's walk). Any other root is walked by
// filepath.WalkDir itself.
func walkDir(root string, fn fs.WalkDirFunc) error {
	if !plainRoot(root) {
		return filepath.WalkDir(root, fn)
	}
	info, err := os.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walkEntry(root, fs.FileInfoToDirEntry(info), fn)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

// walkEntry is filepath.WalkDir's walk of one entry and what lies under
// it (Go's path/filepath), path already clean.
func walkEntry(path string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == filepath.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	dirs, err := os.ReadDir(path)
	if err != nil {
		// Second call, to report ReadDir's error.
		if err = fn(path, d, err); err != nil {
			if err == filepath.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	for _, d1 := range dirs {
		if err := walkEntry(path+string(filepath.Separator)+d1.Name(), d1, fn); err != nil {
			if err == filepath.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// plainRoot reports whether root joined to a name with a separator is
// what filepath.Join makes of them: root is clean, neither "." nor a
// directory named with a trailing separator ("/").
func plainRoot(root string) bool {
	return root != "" && root != "." && filepath.Clean(root) == root && !strings.HasSuffix(root, string(filepath.Separator))
}

// under is the path of rel (a slash path the seal's walk found, so
// clean) under root: filepath.Join(root, rel) without cleaning both again
// when root is clean.
func under(root, rel string) string { return joinUnder(root, plainRoot(root), rel) }

// joinUnder is under with plainRoot(root) given as plain.
func joinUnder(root string, plain bool, rel string) string {
	if !plain {
		return filepath.Join(root, filepath.FromSlash(rel))
	}
	return root + string(filepath.Separator) + filepath.FromSlash(rel)
}

// under is the path of rel under the seal's root (see under).
func (s *Seal) under(rel string) string { return joinUnder(s.root, s.plain, rel) }

// relTo is filepath.Rel(root, p) for a path filepath.WalkDir(root, …)
// gives: what follows root and a separator, without Rel's cleaning of
// both (a seal's walks lstat every file of a run's logs).
func relTo(root, p string) string {
	if p == root {
		return "."
	}
	if rest, ok := strings.CutPrefix(p, root); ok && len(rest) > 1 && rest[0] == filepath.Separator {
		return rest[1:]
	}
	rel, _ := filepath.Rel(root, p)
	return rel
}

func sum(data []byte) [sha256.Size]byte { return sha256.Sum256(data) }

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
	e.size = int64(len(data))
	if len(data) <= MaxKept {
		e.data = data // compared byte for byte: no hash to compute
	} else {
		e.sum = sum(data)
	}
	return e, nil
}

// sameBytes reports whether now (read) holds e's bytes: compared byte for
// byte when e kept them, else by SHA-256.
func (e entry) sameBytes(now entry) bool {
	if e.size != now.size {
		return false
	}
	if e.data != nil {
		return bytes.Equal(e.data, now.data)
	}
	return e.sum == now.sum
}

// bytesSum is the SHA-256 of a file's bytes, kept or not.
func (e entry) bytesSum() [sha256.Size]byte {
	if e.data != nil {
		return sum(e.data)
	}
	return e.sum
}

// NotRestored is the end of a Restore note for a path that could not be
// put back, saying why: " (<why>: not restored)".
func NotRestored(why string) string { return " (" + why + notRestored }

const notRestored = ": not restored)"

// Restored reports whether a Restore note's path was put back.
func Restored(note string) bool { return !strings.HasSuffix(note, notRestored) }

// Restore compares root with the seal and puts it back: a file changed,
// replaced or deleted is rewritten with its sealed bytes (when kept), a
// file or directory added is removed. It returns one line per path put back, sorted, naming it
// relative to root: "<rel> changed", "<rel> deleted", "<rel> added".
func (s *Seal) Restore() ([]string, error) {
	var notes []string
	// Added paths first, so a directory replaced by a file is cleared
	// before its sealed contents are written back.
	added, err := s.added()
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
	// What the stat pass finds as sealed is left be; the rest is checked
	// one by one, parents before children.
	same := s.indexedAsSealed(rels)
	var left []string
	for i, rel := range rels {
		if !same[i] {
			left = append(left, rel)
		}
	}
	slices.Sort(left)
	for _, rel := range left {
		note, err := s.restoreEntry(rel, s.files[rel], added)
		if err != nil {
			return nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	slices.Sort(notes)
	return slices.Compact(notes), nil
}

// statWorkers is how many goroutines indexedAsSealed stats with, and
// statBatch the fewest indexed files it starts them for (a variable for
// the tests: export_test.go).
const statWorkers = 4

var statBatch = 256

// indexedAsSealed reports, for each of rels, whether it is an indexed
// file whose metadata is as sealed, or a sealed directory that is still
// one: what Restore leaves as it is (a path of another kind than sealed
// was removed before, so it is not). The paths are stat'ed by a few
// goroutines at once when there are many indexed files (a long run's
// logs). False means only "not known to be as sealed": restoreEntry
// checks such a path itself. All false when there are few indexed files.
func (s *Seal) indexedAsSealed(rels []string) []bool {
	same := make([]bool, len(rels))
	n := 0
	for _, rel := range rels {
		if s.files[rel].id != "" {
			n++
		}
	}
	if n < statBatch {
		return same
	}
	workers := min(statWorkers, runtime.GOMAXPROCS(0))
	chunk := (len(rels) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(rels); lo += chunk {
		hi := min(lo+chunk, len(rels))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				e := s.files[rels[i]]
				if e.id == "" && !e.dir {
					continue
				}
				st, err := os.Lstat(s.under(rels[i]))
				switch {
				case err != nil:
				case e.dir:
					same[i] = st.IsDir()
				default:
					fp, ok := fingerprintOf(st)
					same[i] = ok && fp == e.fp
				}
			}
		}()
	}
	wg.Wait()
	return same
}

// added lists the paths under root that are not as sealed: added, or of
// another kind than sealed (a file where a directory was, a link where a
// file was), relative to root with slashes.
func (s *Seal) added() ([]string, error) {
	if s.byListing {
		return s.addedByListing()
	}
	var added []string
	err := walkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel := relTo(s.root, p)
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
	return added, err
}

// restoreEntry puts the sealed path rel back (added lists the paths
// Restore removed) and returns its note, "" when it is as sealed.
func (s *Seal) restoreEntry(rel string, e entry, added []string) (string, error) {
	p := s.under(rel)
	if e.link != "" {
		if target, err := os.Readlink(p); err != nil || target != e.link {
			if err := os.RemoveAll(p); err != nil {
				return "", err
			}
			if err := os.Symlink(e.link, p); err != nil {
				return "", err
			}
			return rel + " changed", nil
		}
		return "", nil
	}
	if e.dir {
		if st, err := os.Lstat(p); err != nil || !st.IsDir() {
			if err := os.MkdirAll(p, e.mode); err != nil {
				return "", err
			}
			return rel + "/ deleted", nil
		}
		return "", nil
	}
	if e.id != "" {
		return s.restoreIndexed(rel, p, e, slices.Contains(added, rel))
	}
	var note string
	now, err := read(p)
	switch {
	case err == nil && e.sameBytes(now):
		return "", nil
	case err == nil || slices.Contains(added, rel):
		note = rel + " changed"
	case errors.Is(err, fs.ErrNotExist):
		note = rel + " deleted"
	default:
		note = rel + " changed"
	}
	if e.data == nil {
		return note + NotRestored("it was too large to keep"), nil
	}
	if err := os.RemoveAll(p); err != nil {
		return "", err
	}
	if err := fsutil.WriteAtomic(p, e.data, e.mode); err != nil {
		return "", err
	}
	return note, nil
}

// Forged ends the name a changed file that cannot be put back is moved
// to (restoreIndexed).
const Forged = ".forged"

// restoreIndexed checks an indexed file by its metadata and, when it
// differs (changed, replaced, deleted), puts the file back from its copy
// in the store; when the copy is gone, a changed file is set aside (Forged).
// It returns the note, "" when the file is as sealed.
func (s *Seal) restoreIndexed(rel, p string, e entry, replaced bool) (string, error) {
	note := rel + " changed"
	st, err := os.Lstat(p)
	switch {
	case replaced: // removed above: something else stood there
	case err == nil:
		if fp, ok := fingerprintOf(st); ok && fp == e.fp {
			return "", nil
		}
	case errors.Is(err, fs.ErrNotExist):
		note = rel + " deleted"
	}
	data, ok, err := s.store.Get(e.id)
	if err != nil {
		return "", fmt.Errorf("restore %s: %w", rel, err)
	}
	if !ok {
		// What stands there is not what the runner wrote: it is set
		// aside, so no reader takes it for the runner's.
		why := "its copy " + e.id + " is gone"
		if !strings.HasSuffix(note, " deleted") {
			if err := os.Rename(p, p+Forged); err != nil {
				return "", fmt.Errorf("set aside %s: %w", rel, err)
			}
			why += "; set aside as " + filepath.Base(p) + Forged
		}
		return note + NotRestored(why), nil
	}
	if err := os.RemoveAll(p); err != nil {
		return "", err
	}
	if err := fsutil.WriteAtomic(p, data, e.mode); err != nil {
		return "", err
	}
	return note, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Digest is a SHA-256 (hex) of everything the seal holds: each path with
// its kind, mode and bytes (by their hash), link target or index line. Two
// seals of the same root have the same digest exactly when nothing under
// it differs.
func (s *Seal) Digest() string {
	h := sha256.New()
	for _, rel := range sortedKeys(s.files) {
		e := s.files[rel]
		switch {
		case e.dir:
			fmt.Fprintf(h, "d %s\x00", rel)
		case e.link != "":
			fmt.Fprintf(h, "l %s\x00%s\x00", rel, e.link)
		case e.id != "":
			fmt.Fprintf(h, "i %s\x00%o %s %+v\x00", rel, e.mode, e.id, e.fp)
		default:
			fmt.Fprintf(h, "f %s\x00%o %x\x00", rel, e.mode, e.bytesSum())
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Bytes returns the sealed bytes of the file at rel (slash path under the
// root); ok is false when the seal does not hold its bytes.
func (s *Seal) Bytes(rel string) (data []byte, ok bool) {
	e, found := s.files[rel]
	return e.data, found && e.data != nil
}
