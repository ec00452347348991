// Package fsutil holds the file primitives the state files need: atomic
// writes (temp file in the same directory, fsync, rename, fsync of the
// directory; DESIGN.md decision 9) and bounded reads that refuse symlinks
// leaving the repository.
package fsutil

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxStateFile is the largest state file read (256 MiB).
const MaxStateFile = 256 << 20

// WriteAtomic replaces path with data so that a reader, or a crash at any
// moment, sees either the old or the new content, never a mix. A symlink at
// path is replaced by a regular file, never followed.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	if err := WriteAtomicUnsynced(path, data, perm); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// WriteAtomicUnsynced is WriteAtomic but for the last step, the fsync of
// the directory: the file's data is durable and the rename is made, but
// the rename itself may not survive a crash until the caller calls
// SyncDir on the directory. For a command that writes several files into
// one directory, none of which another file depends on, and then one
// SyncDir for all of them before it writes anything that depends on them
// or reports them written (iter-log end: diff.patch, then meta.json,
// which marks the log complete). Each file is still
// either its old or its new content after a crash, never a mix.
func WriteAtomicUnsynced(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// WriteAtomicAfter is WriteAtomic of path once first has returned: path's
// temporary file is written and fsynced while first runs, and renamed
// into place (then its directory fsynced) only after first succeeded, so
// a file that depends on what first writes never appears before it (a
// record written after the state it records). The two disk waits overlap.
// firstErr is first's error (path is then not written), err this write's.
func WriteAtomicAfter(path string, data []byte, perm fs.FileMode, first func() error) (firstErr, err error) {
	done := make(chan error, 1)
	go func() { done <- first() }()
	tmp, err := writeTemp(path, data, perm)
	if firstErr = <-done; firstErr != nil || err != nil {
		if err == nil {
			os.Remove(tmp)
		}
		return firstErr, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return nil, SyncDir(filepath.Dir(path))
}

// writeTemp writes data to a new temporary file beside path, with perm,
// fsynced and closed, and returns its name; on an error nothing is left.
func writeTemp(path string, data []byte, perm fs.FileMode) (tmp string, err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	tmp = f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return "", err
	}
	if err = f.Chmod(perm); err != nil {
		return "", err
	}
	if err = f.Sync(); err != nil {
		return "", err
	}
	if err = f.Close(); err != nil {
		return "", err
	}
	return tmp, nil
}

// Resolved is p with the symbolic links of its longest existing leading
// part resolved (the rest need not exist), or p cleaned when no part can
// be: where a path that may not exist yet really lies.
func Resolved(p string) string {
	p = filepath.Clean(p)
	for dir, rest := p, ""; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// SyncDir fsyncs a directory so a rename in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// ErrOutside reports a symlink that resolves outside the allowed root.
var ErrOutside = errors.New("symlink leaves the repository")

// ReadFile reads path, at most limit bytes (0 means MaxStateFile). When root
// is not empty and path is a symlink, its target must lie inside root.
func ReadFile(path, root string, limit int64) ([]byte, error) {
	f, st, limit, err := openFile(path, root, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOpen(f, st, limit)
}

// openFile is the checks ReadFile and MapFile share: the limit (0 means
// MaxStateFile), a symlink staying inside root, and not a directory.
func openFile(path, root string, limit int64) (*os.File, os.FileInfo, int64, error) {
	if limit <= 0 {
		limit = MaxStateFile
	}
	if root != "" {
		if err := InsideRoot(path, root); err != nil {
			return nil, nil, 0, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	st, err := f.Stat()
	if err == nil && st.IsDir() {
		err = fmt.Errorf("is a directory")
	}
	if err != nil {
		f.Close()
		return nil, nil, 0, err
	}
	return f, st, limit, nil
}

// readOpen reads f, whose Stat is st, refusing more than limit bytes.
func readOpen(f *os.File, st os.FileInfo, limit int64) ([]byte, error) {
	// Sized from Stat, so a large tree is read in one allocation rather
	// than by repeated doubling; the limit still bounds a file that grows
	// meanwhile or reports no size (a pipe, /proc).
	size := st.Size()
	if size < 0 || size > limit {
		size = limit
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+512))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// InsideRoot checks that path, when a symlink at any level below root
// leads it elsewhere (the file itself or a parent directory), resolves to
// a location inside root. A path that is not under root at all is only
// checked when it is itself a symlink.
func InsideRoot(path, root string) error {
	l, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !Inside(path, root) && l.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	if !Inside(real, r) {
		return fmt.Errorf("%w (points to %s)", ErrOutside, real)
	}
	return nil
}

// Inside reports whether path names root or a place below it,
// by the names alone.
func Inside(path, root string) bool {
	absPath, err1 := filepath.Abs(path)
	absRoot, err2 := filepath.Abs(root)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(absRoot, absPath)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Cause strips an *fs.PathError wrapper, for messages that already name the
// file: "no such file or directory" rather than "open /abs/path: …".
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CopyFile copies the regular file src to dst, a new file (O_EXCL) with
// perm (copy_file_range where the kernel has it: a clone on a filesystem
// that shares extents). Errors: src cannot be read, dst exists or cannot
// be written.
func CopyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
