package seal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// dirWalk is TakeIndexed's walk when its Index names settled directories
// (Index.SettledDir): take's visits, but a settled directory indexed with
// the metadata it still has is not listed, and its files are taken from
// the index (listed).
type dirWalk struct {
	root     string
	skip     func(rel string) bool
	file     func(rel, p string, st fs.FileInfo) (entry, bool, error)
	ix       Index
	old      map[string]indexed  // the index as read
	keep     map[string]indexed  // the index to write
	children map[string][]string // old's paths by their parent directory ("." for root's)
	now      time.Time
	s        *Seal
}

// takeDirs is take with a dirWalk: file gives each regular file's entry
// as for take, and records in keep the files it indexes; the directories
// found indexable are recorded in keep by takeDirs itself. Errors: as
// take's.
func takeDirs(root string, skip func(rel string) bool, file func(rel, p string, st fs.FileInfo) (entry, bool, error), ix Index, old, keep map[string]indexed, now time.Time) (*Seal, error) {
	if skip == nil {
		skip = func(string) bool { return false }
	}
	w := &dirWalk{root: root, skip: skip, file: file, ix: ix, old: old, keep: keep,
		children: map[string][]string{}, now: now, s: &Seal{root: root, skip: skip, files: make(map[string]entry, len(old)), byListing: true, plain: plainRoot(root)}}
	for rel := range old {
		w.children[path.Dir(rel)] = append(w.children[path.Dir(rel)], rel)
	}
	st, err := os.Lstat(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return w.s, nil
	case err != nil:
		return nil, fmt.Errorf("seal %s: %w", root, fsutil.Cause(err))
	case !st.IsDir():
		return w.s, nil
	}
	if _, err := w.dir(root, ".", st); err != nil {
		return nil, fmt.Errorf("seal %s: %w", root, fsutil.Cause(err))
	}
	return w.s, nil
}

// dir seals the directory p (rel under root; st its Lstat) and what lies
// under it. It returns whether the directory is indexed (in keep).
func (w *dirWalk) dir(p, rel string, st fs.FileInfo) (bool, error) {
	fp, ok := fingerprintOf(st)
	if ok && rel != "." && w.notRacy(fp) {
		w.s.files[rel] = entry{dir: true, mode: 0o755, fp: fp, listedAs: true}
	}
	settled := ok && rel != "." && w.ix.SettledDir(rel)
	if e, found := w.old[rel]; settled && found && e.id == dirID && e.fp == fp && w.recent(rel) {
		return w.listed(p, rel, e)
	}
	return w.list(p, rel, settled && w.notRacy(fp), fp)
}

// list seals the directory p by listing it, as take does. indexable says
// whether it may be indexed (settled, not changed within RacyWindow), by
// fp, taken before the listing: it is, when every entry is an indexed
// file or an indexed directory.
func (w *dirWalk) list(p, rel string, indexable bool, fp fingerprint) (bool, error) {
	ents, err := os.ReadDir(p)
	if err != nil {
		return false, err
	}
	for _, d := range ents {
		crel := d.Name()
		if rel != "." {
			crel = rel + "/" + crel
		}
		cp := w.join(p, d.Name())
		switch {
		case w.skip(crel):
			indexable = false
		case d.IsDir():
			w.s.files[crel] = entry{dir: true, mode: 0o755}
			st, err := d.Info()
			if err != nil {
				return false, err
			}
			in, err := w.dir(cp, crel, st)
			if err != nil {
				return false, err
			}
			indexable = indexable && in
		case d.Type().IsRegular():
			st, err := d.Info()
			if err != nil {
				return false, err
			}
			e, ok, err := w.file(crel, cp, st)
			if err != nil {
				return false, err
			}
			if ok {
				w.s.files[crel] = e
			}
			_, in := w.keep[crel]
			indexable = indexable && in
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(cp)
			if err != nil {
				return false, err
			}
			w.s.files[crel] = entry{link: target}
			indexable = false
		default: // not sealed, and not to be hidden by a listing from the index
			indexable = false
		}
	}
	if indexable {
		w.keep[rel] = indexed{id: dirID, fp: fp, at: w.now.Unix()}
	}
	return indexable, nil
}

// listed seals the directory p, indexed as e with the metadata it has
// now, from the index: its files' lines as they are, its directories
// each checked in turn. Should one of those no longer be a directory
// (the listing changed, which moves p's metadata: a race with a writer),
// p is listed after all.
func (w *dirWalk) listed(p, rel string, e indexed) (bool, error) {
	w.keep[rel] = e
	indexed := true
	for _, crel := range w.children[rel] {
		c := w.old[crel]
		if c.id != dirID {
			w.keep[crel] = c
			w.s.files[crel] = entry{mode: fs.FileMode(c.fp.mode).Perm(), size: c.fp.size, id: c.id, fp: c.fp}
			continue
		}
		cp := w.join(p, path.Base(crel))
		st, err := os.Lstat(cp)
		if err != nil || !st.IsDir() {
			w.forget(rel)
			return w.list(p, rel, false, fingerprint{})
		}
		w.s.files[crel] = entry{dir: true, mode: 0o755}
		in, err := w.dir(cp, crel, st)
		if err != nil {
			return false, err
		}
		indexed = indexed && in
	}
	if !indexed {
		delete(w.keep, rel) // a directory under it is listed again: so is it, next time
	}
	return indexed, nil
}

// forget drops what the walk took under rel (not rel itself).
func (w *dirWalk) forget(rel string) {
	prefix := rel + "/"
	for k := range w.s.files {
		if strings.HasPrefix(k, prefix) {
			delete(w.s.files, k)
		}
	}
	for k := range w.keep {
		if strings.HasPrefix(k, prefix) {
			delete(w.keep, k)
		}
	}
	delete(w.keep, rel)
}

// recent reports whether every file line under the directory rel is
// younger than Refresh (an older one is to be read and copied again).
func (w *dirWalk) recent(rel string) bool {
	for _, c := range w.children[rel] {
		if e := w.old[c]; e.id != dirID && w.now.Unix()-e.at >= int64(Refresh/time.Second) {
			return false
		}
	}
	return true
}

// notRacy reports whether fp's times lie more than RacyWindow before
// the walk: a change within the same clock tick could otherwise keep them.
func (w *dirWalk) notRacy(fp fingerprint) bool {
	return w.now.UnixNano()-fp.ctime > int64(RacyWindow) && w.now.UnixNano()-fp.mtime > int64(RacyWindow)
}

// join is the path of name in the directory p, without cleaning it again
// when the walk's root is clean (see walkDir).
func (w *dirWalk) join(p, name string) string {
	if w.s.plain {
		return p + string(filepath.Separator) + name
	}
	return filepath.Join(p, name)
}

// addedByListing is added for a seal takeDirs took: a directory whose
// metadata is still what it was at the seal (listedAs) has the entries it
// had then (adding, removing or renaming one moves its change time), so
// it is not listed again; the directories in it are checked in turn.
// Any other directory is listed, as added does.
func (s *Seal) addedByListing() ([]string, error) {
	dirs := map[string][]string{} // the sealed directories by their parent
	for rel, e := range s.files {
		if e.dir {
			dirs[path.Dir(rel)] = append(dirs[path.Dir(rel)], rel)
		}
	}
	for _, ds := range dirs {
		slices.Sort(ds)
	}
	var added []string
	var visit func(p, rel string) error
	visit = func(p, rel string) error {
		if e := s.files[rel]; rel != "." && e.listedAs {
			if st, err := os.Lstat(p); err == nil {
				if fp, ok := fingerprintOf(st); ok && fp == e.fp {
					for _, c := range dirs[rel] {
						if err := visit(s.under(c), c); err != nil {
							return err
						}
					}
					return nil
				}
			}
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, d := range ents {
			crel := d.Name()
			if rel != "." {
				crel = rel + "/" + crel
			}
			cp := s.under(crel)
			e, sealed := s.files[crel]
			switch {
			case sealed && e.link != "": // a link changed is put back by restoreEntry
			case sealed && e.dir == d.IsDir() && (e.dir || d.Type().IsRegular()):
				if e.dir {
					if err := visit(cp, crel); err != nil {
						return err
					}
				}
			case s.skip(crel):
			default: // not sealed, or of another kind than sealed
				added = append(added, crel)
			}
		}
		return nil
	}
	st, err := os.Lstat(s.root)
	if err != nil || !st.IsDir() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, nil
	}
	return added, visit(s.root, ".")
}
