package gitfile

import (
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// WriteLooseFile stores the bytes of the file at path (followed if a
// symbolic link) as a loose blob under objects (a repository's objects
// directory) and returns its id, hashed with newHash's (the repository's
// SHA-1 or SHA-256): the object file objects/<2 hex>/<rest>, zlib-deflated
// at git's default level for loose objects (best speed) "blob <size>\0"
// and the bytes (gitformat-loose(5)), made as git makes it
// without core.sharedRepository: written to a temporary file beside it
// ("tmp_obj_*", mode 0444, the fan-out directory made with 0777 less the
// umask), then linked to its name, or renamed where links fail. An object
// there already is kept and its time renewed, as git's freshen does; one
// in a pack is not looked for (a loose copy of it is harmless). The file
// is read twice, streamed (to hash, then to deflate), its first size bytes
// (its size when opened, as git reads it): errors when they change in
// between or a file cannot be read or written; no temporary file is left
// behind.
func WriteLooseFile(objects string, newHash func() hash.Hash, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", path)
	}
	size := st.Size()
	header := "blob " + strconv.FormatInt(size, 10) + "\x00"
	h := newHash()
	io.WriteString(h, header)
	if err := copyExactly(h, f, size, path); err != nil {
		return "", err
	}
	id := hex.EncodeToString(h.Sum(nil))
	name := filepath.Join(objects, id[:2], id[2:])
	if _, err := os.Lstat(name); err == nil {
		now := time.Now()
		return id, os.Chtimes(name, now, now)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		return "", err
	}
	tmp, err := looseTemp(filepath.Dir(name))
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // gone once linked or renamed; a no-op then
	again := newHash()
	z, _ := zlib.NewWriterLevel(tmp, zlib.BestSpeed) // core.looseCompression's default
	w := io.MultiWriter(again, z)
	io.WriteString(w, header)
	err = copyExactly(w, f, size, path)
	if err == nil {
		err = z.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if !bytes.Equal(again.Sum(nil), h.Sum(nil)) {
		return "", fmt.Errorf("%s changed while it was stored", path)
	}
	if err := os.Link(tmp.Name(), name); err != nil && !errors.Is(err, fs.ErrExist) {
		if err := os.Rename(tmp.Name(), name); err != nil {
			return "", err
		}
	}
	return id, nil
}

// copyExactly copies the first size bytes of r to w (as git reads a
// file: its size when opened), and errors when r has fewer.
func copyExactly(w io.Writer, r io.Reader, size int64, path string) error {
	n, err := io.CopyN(w, r, size)
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %d bytes of %d: it changed while it was stored", path, n, size)
	}
	return err
}

// looseTemp creates a temporary object file "tmp_obj_<random>", mode
// 0444, in dir.
func looseTemp(dir string) (*os.File, error) {
	for {
		var b [6]byte
		rand.Read(b[:])
		f, err := os.OpenFile(filepath.Join(dir, "tmp_obj_"+hex.EncodeToString(b[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}
