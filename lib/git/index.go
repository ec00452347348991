package git

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// hiddenInIndex is HiddenPaths read from git's index file itself, without
// a git process (issue 16: at 50,000 files, `git ls-files -v` costs about
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
	for _, v := range []string{"GIT_DIR", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_WORK_TREE"} {
		if os.Getenv(v) != "" {
			return nil, nil, false
		}
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
	n := len(data)
	if n < indexHeaderSize+indexSHA1Size || string(data[:4]) != "DIRC" {
		return nil, nil, false
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version != 2 && version != 3 {
		return nil, nil, false
	}
	end := n - indexSHA1Size
	if sum := sha1.Sum(data[:end]); !bytes.Equal(sum[:], data[end:]) {
		return nil, nil, false
	}
	count := binary.BigEndian.Uint32(data[8:12])
	p := indexHeaderSize
	for range count {
		// The fixed fields, the object id, the flags.
		if p+indexEntryFixed+indexSHA1Size+2 > end {
			return nil, nil, false
		}
		switch mode := binary.BigEndian.Uint32(data[p+24 : p+28]); mode {
		case 0o100644, 0o100755, 0o120000, 0o160000:
		default:
			return nil, nil, false // a sparse directory entry (040000) or unknown
		}
		q := p + indexEntryFixed + indexSHA1Size
		flags := binary.BigEndian.Uint16(data[q : q+2])
		q += 2
		var ext uint16
		if flags&indexExtended != 0 {
			if version < 3 || q+2 > end {
				return nil, nil, false
			}
			ext = binary.BigEndian.Uint16(data[q : q+2])
			if ext&^(indexSkipWork|indexIntentToAdd) != 0 {
				return nil, nil, false // git dies on a bit it does not know
			}
			q += 2
		}
		// The path, up to its NUL: its length is in the flags, 0xfff
		// meaning 0xfff or more (git then takes the NUL's place). A
		// length that does not end at the NUL is not git's writing.
		nameLen := bytes.IndexByte(data[q:end], 0)
		if nameLen <= 0 || nameLen != int(flags&indexNameMask) && !(flags&indexNameMask == indexNameMask && nameLen > indexNameMask) {
			return nil, nil, false
		}
		name := data[q : q+nameLen]
		// Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
		size := (q - p + nameLen + 8) &^ 7
		if p+size > end {
			return nil, nil, false
		}
		p += size
		if !inScope(name, scope) {
			continue
		}
		valid := flags&indexValid != 0
		switch {
		case flags&indexStageMask == 0 && ext&indexSkipWork != 0:
			skipped = append(skipped, string(name))
		case valid:
			assumed = append(assumed, string(name))
		}
	}
	// Extensions: a signature, a 32-bit size, the data; git ignores an
	// optional one (upper case first) and refuses any other.
	for p < end {
		if p+8 > end {
			return nil, nil, false
		}
		sig := data[p : p+4]
		size := int(binary.BigEndian.Uint32(data[p+4 : p+8]))
		if sig[0] < 'A' || sig[0] > 'Z' || size < 0 || size > end-p-8 {
			return nil, nil, false
		}
		p += 8 + size
	}
	return assumed, skipped, p == end
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
