package git

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// hiddenInIndex is HiddenPaths read from git's index file itself, without
// a git process (at 50,000 files, `git ls-files -v` costs about
// 9 ms, most of it loading the index through git's collision-detecting
// SHA-1). ok is false whenever anything is not the plain case this reader
// knows exactly, and the caller then asks git:
//
//   - the index is not .git/index of a work tree whose .git is a
//     directory, or git's environment points elsewhere (GIT_DIR,
//     GIT_INDEX_FILE, GIT_COMMON_DIR, GIT_WORK_TREE);
//   - its checksum is not the SHA-1 of its contents (a SHA-256
//     repository, index.skipHash, a corrupt or half-written file: git
//     itself refuses a corrupt one);
//   - it is not version 2 or 3 (version 4 compresses paths);
//   - an entry has a flag, a mode or a length this reader does not know,
//     or the entries and extensions do not end exactly at the checksum;
//   - it has an extension git requires readers to understand (a
//     signature not starting with an upper-case letter: "link", a split
//     index whose entries live in another file; "sdir", a sparse index
//     whose directory entries stand for many paths);
//   - scope holds a path that is not a clean relative path.
//
// The tags follow `git ls-files -v`: an unmerged entry (stage 1-3) is
// "M", else a skip-worktree one "S", else "H"; an assume-unchanged
// (CE_VALID) entry's tag is lower case. HiddenPaths counts "S" and "s" as
// skipped and every other lower-case tag as assumed; this reader lists
// them the same, in the index's order, as ls-files does.
func (r *Repo) hiddenInIndex(scope []string) (assumed, skipped []string, ok bool) {
	if gitEnvElsewhere() {
		return nil, nil, false
	}
	for _, s := range scope {
		if s == "" || s == "." || path.Clean(s) != s || path.IsAbs(s) || s == ".." || strings.HasPrefix(s, "../") {
			return nil, nil, false
		}
	}
	gitDir := filepath.Join(r.root, ".git")
	if st, err := os.Lstat(gitDir); err != nil || !st.IsDir() {
		return nil, nil, false
	}
	// Mapped, not copied into fresh heap (fsutil.MapFile: 4 MB at 50,000
	// files). git replaces the index by a rename, so the mapping holds
	// the file as it was when opened.
	data, release, err := fsutil.MapFile(filepath.Join(gitDir, "index"), "", 1<<40)
	if err != nil {
		return nil, nil, false // no index (a repository without one) or unreadable: git says
	}
	defer release()
	return readHidden(data, scope)
}

// gitEnvElsewhere reports git's environment pointing at another
// repository, work tree or index than the work tree's own .git/index.
func gitEnvElsewhere() bool {
	for _, v := range []string{"GIT_DIR", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_WORK_TREE"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// On-disk index entry flags (git's Documentation/gitformat-index.txt).
const (
	indexValid       = 0x8000 // assume-valid (assume-unchanged)
	indexExtended    = 0x4000 // an extended flags field follows (version 3)
	indexStageMask   = 0x3000
	indexNameMask    = 0x0fff
	indexSkipWork    = 0x4000 // extended: skip-worktree
	indexIntentToAdd = 0x2000 // extended: intent-to-add
	indexHeaderSize  = 12
	indexSHA1Size    = sha1.Size
	indexEntryFixed  = 40 // ctime, mtime, dev, ino, mode, uid, gid, size: ten 32-bit fields
)

// readHidden parses an index file's bytes (see hiddenInIndex).
func readHidden(data []byte, scope []string) (assumed, skipped []string, ok bool) {
	ok = walkIndex(data, true, func(name []byte, flags, ext uint16) {
		if !inScope(name, scope) {
			return
		}
		switch {
		case flags&indexStageMask == 0 && ext&indexSkipWork != 0:
			skipped = append(skipped, string(name))
		case flags&indexValid != 0:
			assumed = append(assumed, string(name))
		}
	}, nil)
	if !ok {
		return nil, nil, false
	}
	return assumed, skipped, true
}

// walkIndex reads an index file's bytes in the plain case hiddenInIndex
// describes, calling entry for every entry (its path, flags and extended
// flags) and extension for every extension (signature, data); with
// verify, the checksum must be the SHA-1 of the contents. ok is false for
// anything else.
func walkIndex(data []byte, verify bool, entry func(name []byte, flags, ext uint16), extension func(sig string, body []byte)) (ok bool) {
	n := len(data)
	if n < indexHeaderSize+indexSHA1Size || string(data[:4]) != "DIRC" {
		return false
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version != 2 && version != 3 {
		return false
	}
	end := n - indexSHA1Size
	if verify {
		if sum := sha1.Sum(data[:end]); !bytes.Equal(sum[:], data[end:]) {
			return false
		}
	}
	count := binary.BigEndian.Uint32(data[8:12])
	p := indexHeaderSize
	for range count {
		// The fixed fields, the object id, the flags.
		if p+indexEntryFixed+indexSHA1Size+2 > end {
			return false
		}
		switch mode := binary.BigEndian.Uint32(data[p+24 : p+28]); mode {
		case 0o100644, 0o100755, 0o120000, 0o160000:
		default:
			return false // a sparse directory entry (040000) or unknown
		}
		q := p + indexEntryFixed + indexSHA1Size
		flags := binary.BigEndian.Uint16(data[q : q+2])
		q += 2
		var ext uint16
		if flags&indexExtended != 0 {
			if version < 3 || q+2 > end {
				return false
			}
			ext = binary.BigEndian.Uint16(data[q : q+2])
			if ext&^(indexSkipWork|indexIntentToAdd) != 0 {
				return false // git dies on a bit it does not know
			}
			q += 2
		}
		// The path, up to its NUL: its length is in the flags, 0xfff
		// meaning 0xfff or more (git then takes the NUL's place). A
		// length that does not end at the NUL is not git's writing.
		nameLen := bytes.IndexByte(data[q:end], 0)
		if nameLen <= 0 || nameLen != int(flags&indexNameMask) && !(flags&indexNameMask == indexNameMask && nameLen > indexNameMask) {
			return false
		}
		name := data[q : q+nameLen]
		// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
		size := (q - p + nameLen + 8) &^ 7
		if p+size > end {
			return false
		}
		p += size
		if entry != nil {
			entry(name, flags, ext)
		}
	}
	// Extensions: a signature, a 32-bit size, the data; git ignores an
	// optional one (upper case first) and refuses any other.
	for p < end {
		if p+8 > end {
			return false
		}
		sig := data[p : p+4]
		size := int(binary.BigEndian.Uint32(data[p+4 : p+8]))
		if sig[0] < 'A' || sig[0] > 'Z' || size < 0 || size > end-p-8 {
			return false
		}
		if extension != nil {
			extension(string(sig), data[p+8:p+8+size])
		}
		p += 8 + size
	}
	return p == end
}

// staleTrees counts the directories whose tree the index's cache of tree
// ids (its TREE extension) does not hold: git add marks a changed path's
// directories so, and git write-tree fills them in again. ok is false
// when the index is not of the plain kind walkIndex reads; an index
// without the extension counts as every directory stale (math.MaxInt).
func (r *Repo) staleTrees() (n int, ok bool) {
	if gitEnvElsewhere() {
		return 0, false
	}
	data, release, err := fsutil.MapFile(filepath.Join(r.root, ".git", "index"), "", 1<<40)
	if err != nil {
		return 0, false
	}
	defer release()
	n = math.MaxInt
	ok = walkIndex(data, false, nil, func(sig string, body []byte) {
		if sig == "TREE" {
			n = countStale(body)
		}
	})
	return n, ok
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
		if string(counts[0]) == "-1" {
			stale++
			continue
		}
		if len(body) < indexSHA1Size {
			return math.MaxInt
		}
		body = body[indexSHA1Size:]
	}
	return stale
}

// inScope reports whether name is at or under one of scope's paths (all
// of them when scope is empty), as git matches a literal pathspec.
func inScope(name []byte, scope []string) bool {
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

// TrackedPaths lists the paths of git's index at or under scope's paths
// (every path when scope is empty), stage 0 and conflicts alike, once
// each: read from the index file itself when it is of the plain kind
// hiddenInIndex reads, else from `git ls-files`.
func (r *Repo) TrackedPaths(scope ...string) ([]string, error) {
	if paths, ok := r.trackedInIndex(scope); ok {
		return paths, nil
	}
	out, err := runEnv(r.root, literal(scope), nil, append([]string{"ls-files", "-z", "--cached"}, pathspec(scope)...)...)
	if err != nil {
		return nil, err
	}
	return slices.Compact(splitZ(out)), nil
}

func (r *Repo) trackedInIndex(scope []string) (paths []string, ok bool) {
	if gitEnvElsewhere() {
		return nil, false
	}
	for _, s := range scope {
		if s == "" || s == "." || path.Clean(s) != s || path.IsAbs(s) || s == ".." || strings.HasPrefix(s, "../") {
			return nil, false
		}
	}
	gitDir := filepath.Join(r.root, ".git")
	if st, err := os.Lstat(gitDir); err != nil || !st.IsDir() {
		return nil, false
	}
	data, release, err := fsutil.MapFile(filepath.Join(gitDir, "index"), "", 1<<40)
	if err != nil {
		return nil, false
	}
	defer release()
	ok = walkIndex(data, false, func(name []byte, _, _ uint16) {
		if inScope(name, scope) && (len(paths) == 0 || paths[len(paths)-1] != string(name)) {
			paths = append(paths, string(name))
		}
	}, nil)
	return paths, ok
}
