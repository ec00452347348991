package cli

import (
	"bytes"
	"encoding/json"
	"io"
)

// MarshalJSON encodes v as every command's --json output is written:
// 2-space indented, HTML characters unescaped, one trailing newline. It is
// the one place that decides how JSON output looks.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON writes v to w as MarshalJSON encodes it.
func WriteJSON(w io.Writer, v any) error {
	data, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// PrintJSON writes v to the command's stdout with WriteJSON.
func (e *Env) PrintJSON(v any) error { return WriteJSON(e.Stdout, v) }
