// Package passcache remembers, in the user's cache directory, answers that
// are slow to get and stay true while their inputs stay the same: an agent
// CLI's version, that its settings passed a dry run, that a just guard's
// recipe exists. A Key stamps every input (a binary, a file, some text);
// a changed input names another entry, so the question is asked again.
// A cache that cannot be read or written loses nothing but time.
package passcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// Key names one cache entry of a kind by its inputs.
type Key struct {
	kind string
	h    hash.Hash
	ok   bool
}

// New starts the key of an entry of kind (a directory name under
// treeloop's cache directory).
func New(kind string) *Key { return &Key{kind: kind, h: sha256.New(), ok: true} }

// Binary adds the executable bin resolves to (PATH, symlinks) and its
// stamp; a bin that cannot be found makes the key unusable.
func (k *Key) Binary(bin string) *Key {
	abs, err := exec.LookPath(bin)
	if err == nil {
		abs, err = filepath.Abs(abs)
	}
	if err != nil {
		k.ok = false
		return k
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	if !k.stamp(abs) {
		k.ok = false
	}
	return k
}

// File adds path's stamp (size, modification time, inode), or that it is
// absent.
func (k *Key) File(path string) *Key {
	if !k.stamp(path) {
		fmt.Fprintf(k.h, "absent %q\x00", path)
	}
	return k
}

// Text adds each part.
func (k *Key) Text(parts ...string) *Key {
	for _, p := range parts {
		fmt.Fprintf(k.h, "%q\x00", p)
	}
	return k
}

// stamp adds path's stamp and reports whether it exists.
func (k *Key) stamp(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	var ino uint64
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = s.Ino
	}
	fmt.Fprintf(k.h, "%q %d %d %d\x00", path, st.Size(), st.ModTime().UnixNano(), ino)
	return true
}

// Path is the entry's file; ok is false when the key is unusable or there
// is no cache directory.
func (k *Key) Path() (string, bool) {
	dir, err := os.UserCacheDir()
	if !k.ok || err != nil {
		return "", false
	}
	return filepath.Join(dir, "treeloop", k.kind, hex.EncodeToString(k.h.Sum(nil)[:16])), true
}

// Get is the entry's value, if it is cached.
func (k *Key) Get() ([]byte, bool) {
	path, ok := k.Path()
	if !ok {
		return nil, false
	}
	data, err := os.ReadFile(path)
	return data, err == nil
}

// Put caches value as the entry's.
func (k *Key) Put(value []byte) {
	path, ok := k.Path()
	if !ok || os.MkdirAll(filepath.Dir(path), 0o755) != nil {
		return
	}
	_ = fsutil.WriteAtomic(path, value, 0o644) // a cache: failing to write it loses nothing
}
