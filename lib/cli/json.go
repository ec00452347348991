package cli

import (
	"bytes"
	"encoding/json"
	"io"
)

// WriteJSON writes v as every command's --json output is written: 2-space
// indented, HTML characters unescaped, one trailing newline. It is the one
// place that decides how JSON output looks.
func WriteJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// PrintJSON writes v to the command's stdout with WriteJSON.
func (e *Env) PrintJSON(v any) error { return WriteJSON(e.Stdout, v) }
