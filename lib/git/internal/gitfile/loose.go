package gitfile

import (
	"bufio"
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
	"strings"
	"sync"
	"syscall"
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
	return id, writeLoose(objects, id, func(w io.Writer) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		again := newHash()
		io.WriteString(w, header)
		io.WriteString(again, header)
		if err := copyExactly(io.MultiWriter(w, again), f, size, path); err != nil {
			return err
		}
		if !bytes.Equal(again.Sum(nil), h.Sum(nil)) {
			return fmt.Errorf("%s changed while it was stored", path)
		}
		return nil
	})
}

// WriteLoose stores body as a loose object of type typ (blob, tree,
// commit) under objects and returns its id, hashed with newHash's, as
// WriteLooseFile stores a file's bytes. Errors: a file cannot be written.
func WriteLoose(objects string, newHash func() hash.Hash, typ string, body []byte) (string, error) {
	id := hex.EncodeToString(HashObject(newHash(), typ, body))
	return id, writeLoose(objects, id, func(w io.Writer) error {
		io.WriteString(w, typ+" "+strconv.Itoa(len(body))+"\x00")
		_, err := w.Write(body)
		return err
	})
}

// writeLoose makes the object file of id under objects, its inflated
// content written by content, unless it is there already (its time then
// renewed): deflated into a temporary file beside it, which is then
// linked to the object's name (renamed where links fail) and removed.
func writeLoose(objects, id string, content func(io.Writer) error) error {
	name := filepath.Join(objects, id[:2], id[2:])
	if _, err := os.Lstat(name); err == nil {
		now := time.Now()
		return os.Chtimes(name, now, now)
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		return err
	}
	tmp, err := looseTemp(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once linked or renamed; a no-op then
	z := deflaters.Get().(*zlib.Writer)
	defer deflaters.Put(z)
	z.Reset(tmp)
	err = content(z)
	if err == nil {
		err = z.Close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), name); err != nil && !errors.Is(err, fs.ErrExist) {
		return os.Rename(tmp.Name(), name)
	}
	return nil
}

// deflaters keeps the zlib writers of loose objects for the next object
// of the process: each holds the compressor's tables, which a fresh one
// allocates anew (a step's seal writes several objects). Reset makes one
// write the stream a new writer of the same level would.
var deflaters = sync.Pool{New: func() any {
	z, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed) // core.looseCompression's default
	return z
}}

// inflaters keeps the zlib readers of loose objects (each a
// zlib.Resetter) for the next read of the process, as deflaters keeps
// the writers: a fresh one allocates its decompressor's window and tables.
var inflaters sync.Pool

// inflater is a zlib reader of r, from inflaters when one is there: the
// stream's header read, as zlib.NewReader reads it. The caller puts it
// back into inflaters once done.
func inflater(r io.Reader) (io.ReadCloser, error) {
	if z, ok := inflaters.Get().(io.ReadCloser); ok {
		if err := z.(zlib.Resetter).Reset(r, nil); err != nil {
			inflaters.Put(z) // Reset sets it up anew next time
			return nil, err
		}
		return z, nil
	}
	return zlib.NewReader(r)
}

// LooseType is the type ("blob", "tree", "commit", "tag") a loose object
// of id under objects declares in its header; ok is false when there is
// no such file or its header cannot be read (a packed object is not
// looked for).
func LooseType(objects, id string) (typ string, ok bool) {
	if len(id) < 3 {
		return "", false
	}
	f, ok := openLoose(objects, id)
	if !ok {
		return "", false
	}
	defer f.Close()
	z, err := inflater(f)
	if err != nil {
		return "", false
	}
	defer inflaters.Put(z)
	var head [32]byte
	n, _ := io.ReadFull(z, head[:])
	h, _, found := strings.Cut(string(head[:n]), "\x00")
	if !found {
		return "", false
	}
	typ, size, found := strings.Cut(h, " ")
	if _, ok := looseSize(size); !found || !ok {
		return "", false
	}
	return typ, true
}

// openLoose opens the loose object file of id under objects for reading:
// ok is false when there is none or it is no regular file (a FIFO there
// would block an open without O_NONBLOCK for ever; git, which looks in its
// packs first, may never open that name).
func openLoose(objects, id string) (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(objects, id[:2], id[2:]), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, false
	}
	return f, true
}

// looseSize is a loose object header's size as git parses it: decimal
// digits alone, no sign, no leading zero but in "0"; ok is false for any
// other (git: "unable to parse header").
func looseSize(s string) (int, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
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

// maxLooseRead bounds the content ReadLoose inflates (a header could claim
// any size): a larger object is left to git.
const maxLooseRead = 64 << 20

// ReadLoose returns the type and content of the loose object id under
// objects, checked against id by newHash's hash (the repository's); ok
// is false when there is no such file, it is not a loose object, or its
// bytes do not hash to id, or it holds more than maxLooseRead bytes (a
// packed object is not looked for: the caller asks git).
func ReadLoose(objects, id string, newHash func() hash.Hash) (typ string, body []byte, ok bool) {
	if len(id) != 2*newHash().Size() || !IsObjectID(id) {
		return "", nil, false
	}
	f, ok := openLoose(objects, id)
	if !ok {
		return "", nil, false
	}
	defer f.Close()
	z, err := inflater(f)
	if err != nil {
		return "", nil, false
	}
	defer inflaters.Put(z)
	r := bufio.NewReader(z)
	head, err := r.ReadSlice(0)
	if err != nil {
		return "", nil, false
	}
	typ, size, found := strings.Cut(string(head[:len(head)-1]), " ")
	n, ok := looseSize(size)
	if !found || !ok || n > maxLooseRead {
		return "", nil, false
	}
	body = make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return "", nil, false
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return "", nil, false // more than the header says
	}
	if hex.EncodeToString(HashObject(newHash(), typ, body)) != id {
		return "", nil, false
	}
	return typ, body, true
}
