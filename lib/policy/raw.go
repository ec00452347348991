package policy

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
)

// Raw bytes (DESIGN.md decision 21): git status compares the work tree
// with the index through the index's stat data and the attributes'
// conversions (eol, working-tree-encoding, ident, a filter), and a session
// controls both: a justfile rewritten into other bytes whose "clean" form
// is unchanged shows in no git status. So the tracked protected files are
// held by their raw bytes before a session (Hold) and compared byte for
// byte after it (Held.Restore), never through git.

// AttributesFile is git's per-directory attributes file. One in a
// directory that holds a protected path, or under a protected directory,
// is protected too (AttributesProtected): it decides how git reads the
// protected files.
const AttributesFile = ".gitattributes"

// MaxHeld is the size up to which a protected file's bytes are held in
// memory; a larger one is compared by its bytes read again, and put back
// from the base commit (git checkout) when it changed.
const MaxHeld = 4 << 20

// heldFile is one protected file as it was before the session.
type heldFile struct {
	mode fs.FileMode // the permission bits of a regular file
	link string      // a symbolic link's target (data nil)
	data []byte      // nil when larger than MaxHeld
	sum  [sha256.Size]byte
	size int64
	// keys are the key entries protecting the file when it is not
	// protected whole (KeysOf): only their values are compared.
	keys []string
}

// Held is the raw bytes of the tracked protected files of a work tree.
type Held struct {
	root  string
	files map[string]heldFile
}

// Hold reads, before a session, the raw bytes of every tracked path of
// repo that ProtectedBy(p, protected) names (runner-owned files, the
// protected_paths globs, the attributes files that govern them) or that
// holds protected keys (KeysOf).
func Hold(repo *git.Repo, protected []string) (*Held, error) {
	paths, err := repo.TrackedPaths(Scope(protected)...)
	if err != nil {
		return nil, err
	}
	h := &Held{root: repo.Root(), files: map[string]heldFile{}}
	for _, p := range paths {
		var keys []string
		if _, _, ok := ProtectedBy(p, protected); !ok {
			if keys = KeysOf(p, protected); keys == nil {
				continue
			}
		}
		f, ok, err := readHeld(filepath.Join(h.root, filepath.FromSlash(p)))
		if err != nil {
			return nil, fmt.Errorf("hold the protected path %s: %w", p, fsutil.Cause(err))
		}
		if ok && (keys == nil || f.data != nil) {
			f.keys = keys
			h.files[p] = f
		}
	}
	return h, nil
}

// readHeld reads a regular file or a symbolic link; ok is false when
// there is none at p (a tracked path deleted before the session).
func readHeld(p string) (f heldFile, ok bool, err error) {
	st, err := os.Lstat(p)
	if err != nil {
		if os.IsNotExist(err) {
			return f, false, nil
		}
		return f, false, err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		f.link, err = os.Readlink(p)
		return f, err == nil, err
	case !st.Mode().IsRegular():
		return f, false, nil
	}
	f.mode = st.Mode().Perm()
	data, err := os.ReadFile(p)
	if err != nil {
		return f, false, err
	}
	f.size = int64(len(data))
	if f.size <= MaxHeld {
		f.data = append([]byte{}, data...)
	} else {
		f.sum = sha256.Sum256(data)
	}
	return f, true, nil
}

// Has reports whether p (repository-relative) is held.
func (h *Held) Has(p string) bool {
	_, ok := h.files[p]
	return ok
}

// Changed lists the held paths whose raw bytes, kind or permission bits
// differ now (a large file's by its SHA-256), or, for a file held for its
// protected keys, whose value at one of them differs (changedKeys),
// sorted.
func (h *Held) Changed() []string {
	var changed []string
	for p, f := range h.files {
		if f.keys != nil {
			if len(h.changedKeys(p)) > 0 {
				changed = append(changed, p)
			}
			continue
		}
		now, ok, err := readHeld(filepath.Join(h.root, filepath.FromSlash(p)))
		if err != nil || !ok || now.link != f.link || now.mode != f.mode || now.size != f.size {
			changed = append(changed, p)
			continue
		}
		if f.link != "" {
			continue
		}
		if f.data != nil && !bytes.Equal(now.data, f.data) || f.data == nil && now.sum != f.sum {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	return changed
}

// Put writes p back as held: whatever is there now (a file, a link, a
// directory) is replaced. ok is false for a large file (not kept).
func (h *Held) Put(p string) (ok bool, err error) {
	f := h.files[p]
	if f.link == "" && f.data == nil {
		return false, nil
	}
	full := filepath.Join(h.root, filepath.FromSlash(p))
	if st, err := os.Lstat(full); err == nil && st.IsDir() {
		if err := os.RemoveAll(full); err != nil {
			return false, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return false, err
	}
	if f.link != "" {
		os.Remove(full)
		return true, os.Symlink(f.link, full)
	}
	if st, err := os.Lstat(full); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		os.Remove(full)
	}
	if err := fsutil.WriteAtomic(full, f.data, f.mode); err != nil {
		return false, err
	}
	return true, os.Chmod(full, f.mode)
}

// AttributesProtected reports whether p is an attributes file that governs
// a protected path: in a directory on the way to one of Scope(entries)'s
// paths, or under one. With a glob that starts with a pattern (Scope nil)
// every attributes file is.
func AttributesProtected(p string, entries []string) bool {
	if path.Base(p) != AttributesFile {
		return false
	}
	scope := Scope(entries)
	if scope == nil {
		return true
	}
	dir := path.Dir(p)
	for _, s := range scope {
		if dir == "." || s == dir || strings.HasPrefix(s, dir+"/") || strings.HasPrefix(dir, s+"/") {
			return true
		}
	}
	return false
}

// attributesScope is the attributes files on the way to scope's paths
// (the root's, and each parent directory's), for a git status limited to
// scope to see a new one.
func attributesScope(scope []string) []string {
	var out []string
	for _, s := range scope {
		for d := path.Dir(s); ; d = path.Dir(d) {
			f := path.Join(d, AttributesFile)
			if !slices.Contains(out, f) && !underAny(f, scope) {
				out = append(out, f)
			}
			if d == "." {
				break
			}
		}
	}
	return out
}

// restore puts back every held path whose raw bytes changed (Changed),
// returning one reason each, naming who: from the held bytes, or for a
// large file from base (git checkout).
func (h *Held) restore(repo *git.Repo, who, base string, protected []string) ([]string, error) {
	var reasons []string
	for _, p := range h.Changed() {
		glob, appendOnly, _ := ProtectedBy(p, protected)
		if keys := h.changedKeys(p); keys != nil {
			reasons = append(reasons, keyReason(who, p, keys, restoredWhole))
		} else if appendOnly {
			reasons = append(reasons, fmt.Sprintf("%s changed or deleted %s, which existed before and is append-only (%s); the runner restored it", who, p, glob))
		} else {
			reasons = append(reasons, fmt.Sprintf("%s changed the protected path %s (%s); the runner restored it", who, p, glob))
		}
		ok, err := h.Put(p)
		if err != nil {
			return nil, fmt.Errorf("restore %s: %w", p, fsutil.Cause(err))
		}
		if !ok {
			if _, err := repo.Run("checkout", base, "--", p); err != nil {
				return nil, err
			}
		}
	}
	return reasons, nil
}

// underAny reports whether p is one of scope's paths or lies under one.
func underAny(p string, scope []string) bool {
	for _, s := range scope {
		if p == s || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// changedKeys is the key entries of the file p, held for its keys, whose
// value differs now from the held bytes'; a file that is no regular file
// now, or cannot be read, changed them all.
func (h *Held) changedKeys(p string) []string {
	f := h.files[p]
	if f.keys == nil {
		return nil
	}
	full := filepath.Join(h.root, filepath.FromSlash(p))
	st, err := os.Lstat(full)
	var now []byte
	switch {
	case os.IsNotExist(err):
	case err != nil || !st.Mode().IsRegular():
		return f.keys
	default:
		if now, err = os.ReadFile(full); err != nil {
			return f.keys
		}
	}
	return changedKeys(p, f.keys, f.data, now)
}
