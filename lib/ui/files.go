package ui

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"syscall"
)

// Reading under .runner/: every path goes through an os.Root opened on the
// .runner directory, so ".." and symlinks that leave it fail; only regular
// files are read, opened without blocking (a FIFO planted in the tree
// cannot hang a request), and never more than a limit into memory.

var (
	errNoRunner = errors.New("no .runner directory")
	errTooLarge = errors.New("file too large")
	errNotFile  = errors.New("not a regular file")
)

// idPattern is the node and run id pattern (DESIGN.md decision 8).
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// iterPattern is an iteration directory's name.
var iterPattern = regexp.MustCompile(`^[0-9]{1,9}$`)

// openRoot opens .runner as an os.Root. A missing .runner is errNoRunner; a
// .runner that is itself a symlink is refused.
func (s *Server) openRoot() (*os.Root, error) {
	st, err := os.Lstat(s.runner)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoRunner
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf(".runner is not a directory (%s)", st.Mode().Type())
	}
	return os.OpenRoot(s.runner)
}

// openFile opens the regular file rel (slash-separated, relative to
// .runner) for reading.
func openFile(root *os.Root, rel string) (*os.File, os.FileInfo, error) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = errNotFile
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readFile reads the regular file rel, refusing one larger than limit.
func readFile(root *os.Root, rel string, limit int64) ([]byte, os.FileInfo, error) {
	f, st, err := openFile(root, rel)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := readAll(f, st.Size(), limit)
	return data, st, err
}

// readAll reads f (of size, as stat said) up to limit bytes.
func readAll(f io.Reader, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, errTooLarge
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+512))
	if _, err := buf.ReadFrom(io.LimitReader(f, limit+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

// tailLines returns the last n lines of f (whose size is size), reading
// backwards in chunks and never more than maxBytes: the returned text
// starts at offset start. A last line without a newline counts as a line.
func tailLines(f io.ReaderAt, size int64, n int, maxBytes int64) (data []byte, start int64, err error) {
	if size <= 0 || n <= 0 {
		return []byte{}, size, nil
	}
	const chunk = 64 << 10
	end := size
	lines := 0
	var parts [][]byte
	total := int64(0)
	first := true
	for end > 0 && total < maxBytes {
		off := max(end-chunk, 0)
		if total+(end-off) > maxBytes {
			off = end - (maxBytes - total)
		}
		buf := make([]byte, end-off)
		if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		scan := buf
		if first {
			// A trailing newline ends the last line; it does not start one.
			scan = bytes.TrimSuffix(scan, []byte{'\n'})
			first = false
		}
		for i := len(scan) - 1; i >= 0; i-- {
			if scan[i] == '\n' {
				lines++
				if lines == n {
					parts = append(parts, buf[i+1:])
					return join(parts), off + int64(i) + 1, nil
				}
			}
		}
		parts = append(parts, buf)
		total += end - off
		end = off
	}
	return join(parts), end, nil
}

// join concatenates parts gathered back to front.
func join(parts [][]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for i := len(parts) - 1; i >= 0; i-- {
		out = append(out, parts[i]...)
	}
	return out
}
