// Package tomlkey finds where the keys of a TOML document are, so that a
// problem found once the document is decoded (a value out of range, a key
// go-toml names without its inline table, a key an array table's element
// may not have) is reported at its line and column. lib/config and
// lib/eval decode with go-toml's strict decoder and word their errors
// with it.
package tomlkey

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Pos is one table header or key of a document: its whole dotted path
// (parts unquoted), the line and column (1-based) of its first part, and
// N, the element of the array table it belongs to (the third [[checks]]
// and its keys have N 2), -1 outside an array table.
type Pos struct {
	Key       []string
	Line, Col int
	N         int
}

// Index is every header and key of a document, in document order.
type Index []Pos

// Of indexes data as far as it parses.
func Of(data []byte) Index {
	var idx Index
	var p unstable.Parser
	p.Reset(data)
	var table []string
	n := -1
	elems := map[string]int{}
	// add records the key of node (a table header or a key-value) under
	// prefix and returns its whole path.
	add := func(prefix []string, node *unstable.Node) []string {
		key := slices.Clone(prefix)
		line, col := 0, 0
		it := node.Key()
		for it.Next() {
			k := it.Node()
			if line == 0 {
				pos := p.Shape(k.Raw).Start
				line, col = pos.Line, pos.Column
			}
			key = append(key, string(k.Data))
		}
		idx = append(idx, Pos{Key: key, Line: line, Col: col, N: n})
		return key
	}
	var value func(prefix []string, v *unstable.Node)
	keyValue := func(prefix []string, node *unstable.Node) {
		value(add(prefix, node), node.Value())
	}
	value = func(prefix []string, v *unstable.Node) {
		switch v.Kind {
		case unstable.InlineTable:
			it := v.Children()
			for it.Next() {
				if c := it.Node(); c.Kind == unstable.KeyValue {
					keyValue(prefix, c)
				}
			}
		case unstable.Array:
			it := v.Children()
			for it.Next() {
				value(prefix, it.Node())
			}
		}
	}
	for p.NextExpression() {
		node := p.Expression()
		switch node.Kind {
		case unstable.Table:
			n = -1
			table = add(nil, node)
		case unstable.ArrayTable:
			n = -1
			table = add(nil, node)
			name := Join(table)
			n = elems[name]
			elems[name]++
			idx[len(idx)-1].N = n
		case unstable.KeyValue:
			keyValue(table, node)
		}
	}
	return idx
}

// At finds the key whose first part starts at line:col.
func (idx Index) At(line, col int) (Pos, bool) {
	for _, k := range idx {
		if k.Line == line && k.Col == col {
			return k, true
		}
	}
	return Pos{}, false
}

// Line finds the line of key (dotted, as Join writes it): the occurrence
// on line near if there is one, else the first.
func (idx Index) Line(key string, near int) (int, bool) {
	found := 0
	for _, k := range idx {
		if Join(k.Key) != key {
			continue
		}
		if k.Line == near {
			return near, true
		}
		if found == 0 {
			found = k.Line
		}
	}
	return found, found > 0
}

// Find is the first occurrence of key in element n of its array table
// (any element when n is -1).
func (idx Index) Find(key []string, n int) (Pos, bool) {
	for _, k := range idx {
		if (n < 0 || k.N == n) && slices.Equal(k.Key, key) {
			return k, true
		}
	}
	return Pos{}, false
}

// Join writes a TOML key in dotted form, quoting parts that need it.
func Join(key []string) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = k
		if k == "" || strings.IndexFunc(k, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) >= 0 {
			parts[i] = strconv.Quote(k)
		}
	}
	return strings.Join(parts, ".")
}

// Owner is the key under key (or key itself) that a position at
// line:col, a value perhaps on a later line than its key, belongs to:
// the last one at or before it. go-toml names a value inside an inline
// table by the inline table's key; Owner finds the value's own.
func (idx Index) Owner(key []string, line, col int) (Pos, bool) {
	var found Pos
	ok := false
	for _, k := range idx {
		if k.Line > line || k.Line == line && k.Col > col {
			break
		}
		if len(k.Key) >= len(key) && slices.Equal(k.Key[:len(key)], key) {
			found, ok = k, true
		}
	}
	return found, ok
}
