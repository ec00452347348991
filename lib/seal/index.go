package seal

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// Store keeps copies of files by their content, outside the sealed
// directory (policy's is git's object database): a file of an indexed seal
// is put back from its copy.
type Store interface {
	// Put copies the files (absolute paths) into the store and returns
	// their ids, in the same order.
	Put(paths []string) ([]string, error)
	// Get returns the bytes stored under id, checked against it; ok is
	// false when the copy is gone or does not match its id.
	Get(id string) (data []byte, ok bool, err error)
}

// Index makes a seal cost what changed since the last one rather than
// everything under its root (the run's iteration logs grow with
// every iteration, and reading them all twice per session made each step
// slower than the one before).
//
// A file that the runner no longer writes (Settled) is indexed once: its
// copy goes to Store, and the index file (Rel, under root, a text file of
// one line per file: id, size, mode, mtime and ctime in ns, inode, the
// time it was indexed, the path) records it with its metadata. A later
// Take that finds the same metadata does not read the file; Restore puts
// it back from its copy when the metadata differs. A write changes the
// change time (ctime), which no program can set back (only moving the
// system clock can, which takes CAP_SYS_TIME; the sandbox drops it), so
// same metadata means same bytes. A file changed within RacyWindow of a
// Take is not indexed yet: file timestamps advance by the kernel's tick
// (at most 10 ms), so a write within the same tick could keep them. An entry
// older than Refresh is copied again, which renews the copy's age (git
// prunes unreferenced objects older than two weeks).
//
// SettledDir, when not nil, names the settled directories (slash paths
// relative to root, never "."): none is the current iteration, holds it
// or lies in it. Such a directory whose every entry is an indexed file or
// a directory indexed in turn is indexed too, by its own metadata (a "dir"
// line, and the index file's header says v2). A later Take that finds its
// metadata unchanged neither lists it nor reads its files' metadata: it
// takes them from the index, since adding, removing or renaming an entry
// moves a directory's change time (and mtime). What a session then
// changes in those files is still found by Restore, which checks every
// indexed file's metadata; a file changed in place between two sessions
// is found there too, and put back.
type Index struct {
	Rel        string
	Store      Store
	Settled    func(rel string) bool
	SettledDir func(rel string) bool // nil: every directory is listed
	Now        func() time.Time      // the clock; nil: time.Now
}

// RacyWindow and Refresh: see Index.
const (
	RacyWindow = 50 * time.Millisecond
	Refresh    = 7 * 24 * time.Hour
)

// indexHeader is the first line of an index file of files alone;
// indexHeaderDirs that of one with directory lines (dirID), which an
// older reader, that would take a directory for a file, reads as
// malformed (empty).
const (
	indexHeader     = "treeloop seal index v1"
	indexHeaderDirs = "treeloop seal index v2"
)

// dirID is the id field of a directory's line in an index file.
const dirID = "dir"

// fingerprint is the metadata a file's indexed bytes are trusted by.
type fingerprint struct {
	size         int64
	mode         uint32
	mtime, ctime int64 // ns
	ino          uint64
}

// indexed is one line of an index file.
type indexed struct {
	id string
	fp fingerprint
	at int64 // unix seconds
}

// readIndex reads an index file; a missing or malformed one is empty (the
// files are then read and indexed again).
func readIndex(p string) map[string]indexed {
	data, err := os.ReadFile(p)
	if err != nil {
		return map[string]indexed{}
	}
	return parseIndex(data)
}

// parseIndex is an index file's lines by path: empty when the header or
// any line is malformed. Lines end with "\n" (a "\r" before it is
// dropped); a line is eight tab-separated fields, the six numbers decimal.
// The file is made a string once; ids and paths are slices of it, not a
// string each (at a thousand iterations, 26,000 allocations a session).
func parseIndex(data []byte) map[string]indexed {
	header, rest, _ := strings.Cut(string(data), "\n")
	header = strings.TrimSuffix(header, "\r")
	dirs := header == indexHeaderDirs
	if !dirs && header != indexHeader {
		return map[string]indexed{}
	}
	out := make(map[string]indexed, strings.Count(rest, "\n"))
	for len(rest) > 0 {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		var f [8]string
		for i := range 7 {
			j := strings.IndexByte(line, '\t')
			if j < 0 {
				return map[string]indexed{}
			}
			f[i], line = line[:j], line[j+1:]
		}
		f[7] = line
		if f[0] == "" || f[7] == "" || f[0] == dirID && !dirs {
			return map[string]indexed{}
		}
		var n [6]int64
		for i := range n {
			v, ok := parseDecimal(f[i+1])
			if !ok {
				return map[string]indexed{}
			}
			n[i] = v
		}
		out[f[7]] = indexed{id: f[0], fp: fingerprint{size: n[0], mode: uint32(n[1]), mtime: n[2], ctime: n[3], ino: uint64(n[4])}, at: n[5]}
	}
	return out
}

// parseDecimal is strconv.ParseInt(b, 10, 64) for the numbers an index
// holds (an optional sign, then at most 19 digits).
func parseDecimal(b string) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, b = b[0] == '-', b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	switch {
	case neg && n <= 1<<63:
		return int64(-n), true
	case !neg && n < 1<<63:
		return int64(n), true
	}
	return 0, false
}

// sameIndex reports whether a and b hold the same lines.
func sameIndex(a, b map[string]indexed) bool {
	if len(a) != len(b) {
		return false
	}
	for rel, e := range a {
		if f, ok := b[rel]; !ok || f != e {
			return false
		}
	}
	return true
}

// formatIndex is an index file's bytes, lines sorted by path.
func formatIndex(entries map[string]indexed) []byte {
	var b strings.Builder
	header := indexHeader
	for _, e := range entries {
		if e.id == dirID {
			header = indexHeaderDirs
			break
		}
	}
	b.WriteString(header + "\n")
	for _, rel := range sortedKeys(entries) {
		e := entries[rel]
		fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", e.id, e.fp.size, e.fp.mode, e.fp.mtime, e.fp.ctime, e.fp.ino, e.at, rel)
	}
	return []byte(b.String())
}

// TakeIndexed is Take with an index (see Index): settled files whose
// metadata matches their index line are not read; the others are read,
// and the settled ones among them copied to the store and indexed. The
// index file itself is sealed by its bytes, like an unindexed file.
func TakeIndexed(root string, skip func(rel string) bool, ix Index) (*Seal, error) {
	now := time.Now()
	if ix.Now != nil {
		now = ix.Now()
	}
	indexPath := filepath.Join(root, filepath.FromSlash(ix.Rel))
	old := readIndex(indexPath)
	keep := make(map[string]indexed, len(old))
	var fresh []string // settled files read now, to index
	file := func(rel, p string, st fs.FileInfo) (entry, bool, error) {
		if rel == ix.Rel {
			return entry{}, false, nil // sealed below, once written
		}
		fp, ok := fingerprintOf(st)
		settled := ok && ix.Settled(rel) && !strings.ContainsAny(rel, "\t\n\r")
		if settled {
			if e, found := old[rel]; found && e.fp == fp && now.Unix()-e.at < int64(Refresh/time.Second) {
				keep[rel] = e
				return entry{mode: st.Mode().Perm(), size: st.Size(), id: e.id, fp: fp}, true, nil
			}
		}
		e, err := read(p)
		if err != nil {
			return entry{}, false, err
		}
		if settled && now.UnixNano()-fp.ctime > int64(RacyWindow) && now.UnixNano()-fp.mtime > int64(RacyWindow) {
			fresh = append(fresh, rel)
			keep[rel] = indexed{fp: fp, at: now.Unix()}
		}
		return e, true, nil
	}
	var s *Seal
	var err error
	if ix.SettledDir == nil {
		s, err = take(root, skip, file)
	} else {
		s, err = takeDirs(root, skip, file, ix, old, keep, now)
	}
	if err != nil {
		return nil, err
	}
	// Copying and indexing save later seals work; a failure (a full disk)
	// costs only that: the files read now are sealed by their bytes.
	if len(fresh) > 0 {
		paths := make([]string, len(fresh))
		for i, rel := range fresh {
			paths[i] = filepath.Join(root, filepath.FromSlash(rel))
		}
		ids, err := ix.Store.Put(paths)
		if err != nil {
			// A directory's line stands for its files' lines.
			for rel, e := range keep {
				if e.id == dirID {
					delete(keep, rel)
				}
			}
		}
		for i, rel := range fresh {
			if err != nil {
				delete(keep, rel)
				continue
			}
			e := keep[rel]
			e.id = ids[i]
			keep[rel] = e
		}
	}
	prev, err := os.ReadFile(indexPath)
	if err != nil && len(keep) == 0 {
		return s, nil // nothing indexed, no index file: nothing to seal
	}
	// Nothing indexed or dropped since the file was read: it stands as it
	// is, unformatted (at a thousand iterations, formatting it again was a
	// sixth of a session's seal).
	data := prev
	if err != nil || !sameIndex(old, keep) {
		data = formatIndex(keep)
	}
	if err != nil || !bytes.Equal(prev, data) {
		if fsutil.WriteAtomic(indexPath, data, 0o644) != nil {
			data = prev // the index as it stands is sealed
		}
	}
	if data != nil {
		s.files[ix.Rel] = entry{mode: 0o644, data: data, size: int64(len(data))}
	}
	s.store = ix.Store
	return s, nil
}

// CheckIndex puts back, from their copies, the indexed files under root
// whose metadata no longer matches their index line, without a seal taken
// before: for a session that ended without its Restore (its process
// killed). Only the files the index lists are checked; a file the index
// does not list is left as it is. It returns one note per file, as
// Restore words them.
func CheckIndex(root string, ix Index) ([]string, error) {
	s := &Seal{root: root, store: ix.Store, plain: plainRoot(root)}
	var notes []string
	old := readIndex(filepath.Join(root, filepath.FromSlash(ix.Rel)))
	for _, rel := range sortedKeys(old) {
		e := old[rel]
		if e.id == dirID || !ix.Settled(rel) {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(rel))
		note, err := s.restoreIndexed(rel, p, entry{mode: fs.FileMode(e.fp.mode).Perm(), id: e.id, fp: e.fp}, false)
		if err != nil {
			return nil, err
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	return notes, nil
}
