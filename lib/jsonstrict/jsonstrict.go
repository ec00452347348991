// Package jsonstrict decodes JSON documents strictly: one value, valid UTF-8,
// no byte order mark, no duplicate object keys (not "last one wins"), bounded
// nesting, and every error located by line and column.
package jsonstrict

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxDepth is the deepest nesting of arrays and objects accepted.
const MaxDepth = 1000

// Error is a decoding error at a position in the input. Line and Col are
// 1-based; Col counts bytes.
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	return fmt.Sprintf("line %d column %d: %s", e.Line, e.Col, e.Msg)
}

// Position converts a byte offset in data to a 1-based line and column.
func Position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

func at(data []byte, off int64, format string, args ...any) *Error {
	l, c := Position(data, off)
	return &Error{Line: l, Col: c, Msg: fmt.Sprintf(format, args...)}
}

// Decode parses data into map[string]any, []any, string, float64, bool and
// nil. The errors it returns are *Error.
func Decode(data []byte) (any, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{Msg: "empty document"}
	}
	if bytes.HasPrefix(data, []byte("\xEF\xBB\xBF")) {
		return nil, &Error{Line: 1, Col: 1, Msg: "starts with a UTF-8 byte order mark; save the file without it"}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, at(data, int64(off), "invalid UTF-8 byte 0x%02x", data[off])
	}
	if off, ok := tooDeep(data); ok {
		return nil, at(data, off, "nesting deeper than %d levels", MaxDepth)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, convert(data, err)
	}
	return v, nil
}

// tooDeep reports the offset where nesting first exceeds MaxDepth.
func tooDeep(data []byte) (int64, bool) {
	depth, inStr, esc := 0, false, false
	for i, b := range data {
		switch {
		case inStr:
			if esc {
				esc = false
			} else if b == '\\' {
				esc = true
			} else if b == '"' {
				inStr = false
			}
		case b == '"':
			inStr = true
		case b == '[' || b == '{':
			depth++
			if depth > MaxDepth {
				return int64(i), true
			}
		case b == ']' || b == '}':
			depth--
		}
	}
	return 0, false
}

func convert(data []byte, err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		msg := se.Err.Error()
		if errors.Is(se.Err, jsontext.ErrDuplicateName) {
			msg = fmt.Sprintf("duplicate key %s", lastToken(se.JSONPointer))
		}
		return at(data, se.ByteOffset, "%s", msg)
	}
	var sem *json.SemanticError
	if errors.As(err, &sem) {
		return at(data, sem.ByteOffset, "%v", sem.Err)
	}
	return &Error{Msg: err.Error()}
}

func lastToken(p jsontext.Pointer) string {
	last := ""
	for tok := range p.Tokens() {
		last = tok
	}
	return fmt.Sprintf("%q", last)
}
