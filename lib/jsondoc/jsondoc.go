// Package jsondoc is the one writer of treeloop's JSON: every JSON file
// (run_state.json, run records, meta.json and the iteration's other
// records, queued answers, eval results, cassettes) and every --json
// output is Marshal's bytes, and JSON set inside text or sent on one line
// (a commit body's values, the web UI's responses and events, a CLI's
// argument) is Compact's. Both escape alike: encoding/json's escaping
// with HTML escaping off, so <, > and & are written as themselves (never
// \u003c), control characters as \n, \t, … or \u00XX, U+2028 and U+2029
// as \u2028 and \u2029, invalid UTF-8 as \ufffd. The task tree's
// canonical encoder (lib/tree) writes the same bytes as Marshal, held to
// it by its differential tests.
package jsondoc

import (
	"bytes"
	"encoding/json"
	"io"
)

// Marshal is v as a JSON document: 2-space indent, HTML characters
// unescaped, one trailing newline.
func Marshal(v any) ([]byte, error) { return encode(v, "  ") }

// Compact is v as one line of JSON, escaped as Marshal escapes, without a
// trailing newline.
func Compact(v any) ([]byte, error) {
	b, err := encode(v, "")
	return bytes.TrimSuffix(b, []byte{'\n'}), err
}

// Write writes v to w as Marshal encodes it.
func Write(w io.Writer, v any) error {
	data, err := Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// encode is the one encoder: indent "" is one line.
func encode(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
