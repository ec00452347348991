package gitfile

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The errors of ReadBatch.
var (
	ErrBatchShort = errors.New("git cat-file --batch: output ends early")
	ErrBatchLine  = errors.New("git cat-file --batch: unexpected line")
)

// BatchRecord is one answer of `git cat-file --batch` in its default
// format (git-cat-file(1), "BATCH OUTPUT"): the object's id, type and
// content, or Missing for a name git reports missing or ambiguous (ID,
// Type and Body then empty).
type BatchRecord struct {
	ID, Type string
	Body     []byte
	Missing  bool
}

// ReadBatch reads one answer from the front of out: "<id> SP <type> SP
// <size> LF <content> LF", or "<name> SP missing LF" (or "ambiguous"),
// and returns it with the rest of out. ErrBatchShort when out has no
// full line (rest nil); ErrBatchLine, wrapped with the line, when the
// line is neither form or the content is cut short (rest: what follows
// the line).
func ReadBatch(out []byte) (rec BatchRecord, rest []byte, err error) {
	line, after, ok := bytes.Cut(out, []byte{'\n'})
	if !ok {
		return BatchRecord{}, nil, ErrBatchShort
	}
	if bytes.HasSuffix(line, []byte(" missing")) || bytes.HasSuffix(line, []byte(" ambiguous")) {
		return BatchRecord{Missing: true}, after, nil // the name may hold spaces
	}
	f := strings.Fields(string(line))
	if len(f) != 3 {
		return BatchRecord{}, after, &lineError{line: string(line)}
	}
	size, err := strconv.Atoi(f[2])
	if err != nil || size < 0 || size+1 > len(after) {
		return BatchRecord{}, after, &lineError{line: string(line)}
	}
	return BatchRecord{ID: f[0], Type: f[1], Body: after[:size]}, after[size+1:], nil
}

// lineError is ErrBatchLine with the line.
type lineError struct{ line string }

func (e *lineError) Error() string { return fmt.Sprintf("%v %q", ErrBatchLine, e.line) }
func (e *lineError) Unwrap() error { return ErrBatchLine }
