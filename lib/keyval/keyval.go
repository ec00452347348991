// Package keyval reads the value at one key of a configuration file, for
// the protected_paths entries that protect a key and not the whole file
// ("FILE#KEY", DESIGN.md decision 25): a test runner's settings in a file
// that holds the project's other settings too, such as pytest's
// [tool.pytest.ini_options] in pyproject.toml, jest's "jest" in
// package.json or [tool:pytest] in setup.cfg.
//
// The format is the file's extension's: .toml (TOML), .json (JSON, read
// strictly: a key given twice is an error, not "the last one wins"), .ini
// and .cfg (INI, as pytest's iniconfig and Python's configparser read
// it). A KEY of TOML or JSON is a dotted key in TOML's syntax
// ("tool.pytest", `tool."my.key"`), and its value the table, object or
// value there; a KEY of INI is a section's name, whole ("tool:pytest"),
// and its value the section's settings.
package keyval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path"
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/treeloop/treeloop/lib/jsonstrict"
)

// The formats.
const (
	TOML = "toml"
	JSON = "json"
	INI  = "ini"
)

// Format is the format of the file named name, by its extension; "" when
// none is known here.
func Format(name string) string {
	switch path.Ext(name) {
	case ".toml":
		return TOML
	case ".json":
		return JSON
	case ".ini", ".cfg":
		return INI
	}
	return ""
}

// Split splits a protected_paths entry "FILE#KEY" at the first "#" after
// which FILE names a file of a known format (Format); ok is false for
// any other entry, whose "#" is then part of its glob.
func Split(entry string) (file, key string, ok bool) {
	for i := 0; i < len(entry); i++ {
		if entry[i] == '#' && Format(entry[:i]) != "" {
			return entry[:i], entry[i+1:], true
		}
	}
	return entry, "", false
}

// ParseKey is the parts of key in format: TOML's dotted-key syntax for
// TOML and JSON, the whole name of a section for INI. Errors: an empty
// key, or one TOML cannot read.
func ParseKey(format, key string) ([]string, error) {
	if strings.TrimSpace(key) == "" {
		return nil, errors.New("empty key")
	}
	if format == INI {
		if strings.ContainsAny(key, "[]\n") {
			return nil, fmt.Errorf("section name %q holds [, ] or a newline", key)
		}
		return []string{strings.TrimSpace(key)}, nil
	}
	var p unstable.Parser
	p.Reset([]byte(key + " = 0\n"))
	var parts []string
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.KeyValue || parts != nil {
			return nil, fmt.Errorf("%q is not a dotted key", key)
		}
		it := e.Key()
		for it.Next() {
			parts = append(parts, string(it.Node().Data))
		}
	}
	if err := p.Error(); err != nil || parts == nil {
		return nil, fmt.Errorf("%q is not a dotted key", key)
	}
	return parts, nil
}

// Value is what the file named name, holding data, has at key: the
// decoded value (a map for a table, an object or a section), and whether
// there is one. Errors: the key cannot be read, or the file is not well
// formed in its format.
func Value(name string, data []byte, key string) (v any, present bool, err error) {
	format := Format(name)
	parts, err := ParseKey(format, key)
	if err != nil {
		return nil, false, err
	}
	var doc any
	switch format {
	case TOML:
		var m map[string]any
		if err := toml.Unmarshal(data, &m); err != nil {
			return nil, false, fmt.Errorf("TOML: %v", err)
		}
		doc = m
	case JSON:
		if doc, err = jsonstrict.Decode(data); err != nil {
			return nil, false, fmt.Errorf("JSON: %v", err)
		}
	case INI:
		sections, err := parseINI(data)
		if err != nil {
			return nil, false, fmt.Errorf("INI: %v", err)
		}
		s, ok := sections[parts[0]]
		return s, ok, nil
	default:
		return nil, false, fmt.Errorf("%s: not a TOML, JSON or INI file", name)
	}
	for _, k := range parts {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		if doc, ok = m[k]; !ok {
			return nil, false, nil
		}
	}
	return doc, true, nil
}

// Changed reports whether the value at key differs between two versions
// of the file named name (nil: no file, so no value): added, removed or
// modified. A version that cannot be read counts as a change unless both
// are the same bytes: no one can tell what a reader of it would take.
func Changed(name, key string, before, after []byte) bool {
	if bytes.Equal(before, after) && (before == nil) == (after == nil) {
		return false
	}
	read := func(data []byte) (any, bool, error) {
		if data == nil {
			return nil, false, nil
		}
		return Value(name, data, key)
	}
	v1, ok1, err1 := read(before)
	v2, ok2, err2 := read(after)
	if err1 != nil || err2 != nil {
		return true
	}
	return ok1 != ok2 || !reflect.DeepEqual(v1, v2)
}

// parseINI reads an INI file's sections as pytest's iniconfig does: "[name]"
// opens a section, "#" and ";" start a comment line, a line indented
// under a setting continues its value. A section's value is its
// settings, a map of each key (as written: a reader that folds case may
// take two spellings for one) to its value's lines joined by newlines.
// Errors: a section given twice, a key given twice in a section, a
// setting outside a section.
func parseINI(data []byte) (map[string]any, error) {
	sections := map[string]any{}
	var cur map[string]any
	var key string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := strings.TrimRight(sc.Text(), " \t\r")
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
			continue
		case raw[0] == ' ' || raw[0] == '\t':
			if cur == nil || key == "" {
				return nil, fmt.Errorf("line %d: a continuation line with no setting before it", n)
			}
			cur[key] = cur[key].(string) + "\n" + line
			continue
		case line[0] == '[':
			name, ok := strings.CutSuffix(line[1:], "]")
			if !ok {
				return nil, fmt.Errorf("line %d: a section header without ]", n)
			}
			name = strings.TrimSpace(name)
			if _, dup := sections[name]; dup {
				return nil, fmt.Errorf("line %d: section [%s] given twice", n, name)
			}
			cur, key = map[string]any{}, ""
			sections[name] = cur
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("line %d: a setting outside any section", n)
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			key = line
		} else {
			key = strings.TrimSpace(line[:i])
		}
		if _, dup := cur[key]; dup {
			return nil, fmt.Errorf("line %d: %s given twice in its section", n, key)
		}
		val := ""
		if i >= 0 {
			val = strings.TrimSpace(line[i+1:])
		}
		cur[key] = val
	}
	return sections, sc.Err()
}
