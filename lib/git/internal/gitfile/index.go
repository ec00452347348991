package gitfile

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
)

// ErrNotPlain is wrapped by every refusal of the index reader: the file
// is not the plain kind it reads exactly (see WalkIndex), and git must
// answer instead.
var ErrNotPlain = errors.New("not a plain index")

// On-disk index entry flags (gitformat-index(5), "Index entry").
const (
	FlagAssumeValid  = 0x8000 // assume-valid (assume-unchanged)
	FlagExtended     = 0x4000 // an extended flags field follows (version 3)
	FlagStageMask    = 0x3000
	FlagNameMask     = 0x0fff
	ExtSkipWorktree  = 0x4000 // extended: skip-worktree
	ExtIntentToAdd   = 0x2000 // extended: intent-to-add
	IndexHeaderSize  = 12     // "DIRC", version, entry count
	IndexSHA1Size    = sha1.Size
	IndexEntryFixed  = 40 // ctime, mtime, dev, ino, mode, uid, gid, size: ten 32-bit fields
	indexTreeInvalid = "-1"
)

// IndexEntry is one entry of an index file as WalkIndex meets it: its
// path (a slice of the file's bytes, valid during the call), its 16-bit
// flags and its extended flags (0 without).
type IndexEntry struct {
	Path     []byte
	Flags    uint16
	ExtFlags uint16
}

// Stage is the entry's merge stage: 0 for a merged path, 1-3 for the
// stages of a conflict.
func (e IndexEntry) Stage() int { return int(e.Flags&FlagStageMask) >> 12 }

// AssumeValid reports the assume-unchanged mark.
func (e IndexEntry) AssumeValid() bool { return e.Flags&FlagAssumeValid != 0 }

// SkipWorktree reports the skip-worktree mark.
func (e IndexEntry) SkipWorktree() bool { return e.ExtFlags&ExtSkipWorktree != 0 }

// notPlain is an ErrNotPlain saying what was met.
func notPlain(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotPlain, fmt.Sprintf(format, args...))
}

// WalkIndex reads an index file's bytes, calling entry for every entry in
// the file's order and extension for every extension (its signature and
// data); either may be nil. With verify, the trailing checksum must be the
// SHA-1 of the contents. It follows gitformat-index(5) for the plain case
// and refuses (an error wrapping ErrNotPlain, after calls for the entries
// before the refusal) anything else:
//
//   - a checksum that is not the SHA-1 of the contents, when verified (a
//     SHA-256 repository, index.skipHash, a corrupt or half-written file:
//     git itself refuses a corrupt one);
//   - a version other than 2 or 3 (version 4 compresses paths);
//   - an entry with a mode other than 100644, 100755, 120000 or 160000
//     (040000: a sparse index's directory entry standing for many paths),
//     an extended flag other than skip-worktree and intent-to-add, or a
//     path length that does not end at the path's NUL;
//   - entries and extensions that do not end exactly at the checksum;
//   - an extension git requires readers to understand (a signature not
//     starting with an upper-case letter: "link", a split index whose
//     entries live in another file; "sdir", a sparse index).
func WalkIndex(data []byte, verify bool, entry func(IndexEntry), extension func(sig string, body []byte)) error {
	n := len(data)
	if n < IndexHeaderSize+IndexSHA1Size || string(data[:4]) != "DIRC" {
		return notPlain("no index header")
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version != 2 && version != 3 {
		return notPlain("version %d", version)
	}
	end := n - IndexSHA1Size
	if verify {
		if sum := sha1.Sum(data[:end]); !bytes.Equal(sum[:], data[end:]) {
			return notPlain("the checksum is not the contents' SHA-1")
		}
	}
	p, err := walkEntries(data, end, version, binary.BigEndian.Uint32(data[8:12]), entry)
	if err != nil {
		return err
	}
	return walkExtensions(data, p, end, extension)
}

// walkEntries reads count entries from data[IndexHeaderSize:end] and
// returns the offset past them.
func walkEntries(data []byte, end int, version, count uint32, entry func(IndexEntry)) (int, error) {
	p := IndexHeaderSize
	for range count {
		// The fixed fields, the object id, the flags.
		if p+IndexEntryFixed+IndexSHA1Size+2 > end {
			return 0, notPlain("entries past the end")
		}
		switch mode := binary.BigEndian.Uint32(data[p+24 : p+28]); mode {
		case 0o100644, 0o100755, 0o120000, 0o160000:
		default:
			return 0, notPlain("an entry of mode %o", mode) // a sparse directory entry (040000) or unknown
		}
		q := p + IndexEntryFixed + IndexSHA1Size
		flags := binary.BigEndian.Uint16(data[q : q+2])
		q += 2
		var ext uint16
		if flags&FlagExtended != 0 {
			if version < 3 || q+2 > end {
				return 0, notPlain("extended flags in version %d", version)
			}
			ext = binary.BigEndian.Uint16(data[q : q+2])
			if ext&^(ExtSkipWorktree|ExtIntentToAdd) != 0 {
				return 0, notPlain("an unknown extended flag %#x", ext) // git dies on a bit it does not know
			}
			q += 2
		}
		// The path, up to its NUL: its length is in the flags, 0xfff
		// meaning 0xfff or more (git then takes the NUL's place). A
		// length that does not end at the NUL is not git's writing.
		nameLen := bytes.IndexByte(data[q:end], 0)
		if nameLen <= 0 || nameLen != int(flags&FlagNameMask) && !(flags&FlagNameMask == FlagNameMask && nameLen > FlagNameMask) {
			return 0, notPlain("a path length that is not the path's")
		}
		name := data[q : q+nameLen]
		// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
		size := (q - p + nameLen + 8) &^ 7
		if p+size > end {
			return 0, notPlain("an entry past the end")
		}
		p += size
		if entry != nil {
			entry(IndexEntry{Path: name, Flags: flags, ExtFlags: ext})
		}
	}
	return p, nil
}

// walkExtensions reads the extensions from data[p:end]: a signature, a
// 32-bit size, the data; git ignores an optional one (upper case first)
// and refuses any other.
func walkExtensions(data []byte, p, end int, extension func(sig string, body []byte)) error {
	for p < end {
		if p+8 > end {
			return notPlain("an extension past the end")
		}
		sig := data[p : p+4]
		size := int(binary.BigEndian.Uint32(data[p+4 : p+8]))
		if sig[0] < 'A' || sig[0] > 'Z' {
			return notPlain("the required extension %q", sig)
		}
		if size < 0 || size > end-p-8 {
			return notPlain("an extension past the end")
		}
		if extension != nil {
			extension(string(sig), data[p+8:p+8+size])
		}
		p += 8 + size
	}
	return nil
}

// CleanScope reports whether every path of scope is a clean relative
// path (not "", ".", absolute, or climbing out with ".."), the only
// pathspecs InScope matches as git does.
func CleanScope(scope []string) bool {
	for _, s := range scope {
		if s == "" || s == "." || path.Clean(s) != s || path.IsAbs(s) || s == ".." || strings.HasPrefix(s, "../") {
			return false
		}
	}
	return true
}

// InScope reports whether name is at or under one of scope's paths (all
// of them when scope is empty), as git matches a literal pathspec of
// clean relative paths (CleanScope).
func InScope(name []byte, scope []string) bool {
	if len(scope) == 0 {
		return true
	}
	for _, s := range scope {
		if len(name) >= len(s) && string(name[:len(s)]) == s && (len(name) == len(s) || name[len(s)] == '/') {
			return true
		}
	}
	return false
}

// Hidden lists the entries at or under scope (CleanScope's paths; none:
// all) that `git ls-files -v` tags as not compared with the work tree, in
// the index's order: skipped those it tags "S" or "s" (skip-worktree, at
// stage 0), assumed every other entry with a lower-case tag
// (assume-unchanged; an unmerged one's "m" included). The checksum is
// verified; an error wraps ErrNotPlain (WalkIndex).
func Hidden(data []byte, scope []string) (assumed, skipped []string, err error) {
	err = WalkIndex(data, true, func(e IndexEntry) {
		if !InScope(e.Path, scope) {
			return
		}
		switch {
		case e.Stage() == 0 && e.SkipWorktree():
			skipped = append(skipped, string(e.Path))
		case e.AssumeValid():
			assumed = append(assumed, string(e.Path))
		}
	}, nil)
	if err != nil {
		return nil, nil, err
	}
	return assumed, skipped, nil
}

// Tracked lists the paths at or under scope (CleanScope's paths; none:
// all), each once (an unmerged path's stages are one), in the index's
// order: `git ls-files -z --cached`. The checksum is not verified; an
// error wraps ErrNotPlain (WalkIndex).
func Tracked(data []byte, scope []string) ([]string, error) {
	var paths []string
	err := WalkIndex(data, false, func(e IndexEntry) {
		if InScope(e.Path, scope) && (len(paths) == 0 || paths[len(paths)-1] != string(e.Path)) {
			paths = append(paths, string(e.Path))
		}
	}, nil)
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// StaleTrees counts the directories whose tree the index's cache of tree
// ids (its TREE extension, gitformat-index(5) "Cache tree") does not
// hold: git add marks a changed path's directories so, and git write-tree
// fills them in again. An index without the extension, or with one this
// reader cannot read, counts as every directory stale (math.MaxInt). The
// checksum is not verified; an error wraps ErrNotPlain (WalkIndex).
func StaleTrees(data []byte) (int, error) {
	n := math.MaxInt
	err := WalkIndex(data, false, nil, func(sig string, body []byte) {
		if sig == "TREE" {
			n = countStale(body)
		}
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// countStale counts the invalidated entries of a TREE extension: each is
// a path, NUL, the entry count in ASCII ("-1" when invalidated), a space,
// the subtree count, a line feed, then, for a valid one, its tree id.
func countStale(body []byte) int {
	stale := 0
	for len(body) > 0 {
		nul := bytes.IndexByte(body, 0)
		lf := bytes.IndexByte(body, '\n')
		if nul < 0 || lf < nul {
			return math.MaxInt
		}
		counts := bytes.Fields(body[nul+1 : lf])
		body = body[lf+1:]
		if len(counts) != 2 {
			return math.MaxInt
		}
		if string(counts[0]) == indexTreeInvalid {
			stale++
			continue
		}
		if len(body) < IndexSHA1Size {
			return math.MaxInt
		}
		body = body[IndexSHA1Size:]
	}
	return stale
}
