package tree

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// fastParse decodes a task tree in one pass over its bytes, checking every
// constraint of schemas/task_tree.v1.schema.json inline. It returns the
// tree and true only for a document that jsonstrict and the schema accept
// (FuzzFastParse checks this against the full path, with the committed
// corpus replayed in CI); on anything unusual it gives up (false) and
// Parse takes the full path, jsonstrict and santhosh-tekuri/jsonschema,
// which also words the errors. It exists because the full path costs
// about 15 µs per node, most of it in generic validation, and every
// command of a step loads the tree. It reads JSON itself rather than
// through a token decoder: the tree is one string and its fields are
// substrings of it (issue 16).
func fastParse(data []byte) (*Node, bool) {
	root, why := fastParseWhy(data)
	return root, why == ""
}

// fastParseWhy is fastParse with the reason it gave up ("" when it did
// not): the first problem it met, one line, for the commands that do not
// link the full validator (schema.Linked) and so cannot word every problem.
func fastParseWhy(data []byte) (*Node, string) {
	if len(data) == 0 {
		return nil, "the file is empty"
	}
	if data[0] == 0xEF {
		return nil, "the file starts with a byte order mark"
	}
	if !utf8.Valid(data) {
		return nil, "not valid UTF-8"
	}
	p := fastParser{b: data, s: string(data)}
	p.ws()
	root, ok := p.node(0)
	if !ok {
		if p.why == "" {
			p.why = "not a task tree"
		}
		return nil, p.why
	}
	if p.ws(); p.i != len(p.s) {
		return nil, "data after the tree"
	}
	return root, ""
}

// fastMaxDepth bounds node nesting on the fast path, well inside
// jsonstrict.MaxDepth (each node level nests two JSON levels).
const fastMaxDepth = 400

// fastParser reads b, valid UTF-8, from offset i; s is b's copy the
// tree's strings are cut from.
type fastParser struct {
	b   []byte
	s   string
	i   int
	why string // the first problem met, for fastParseWhy
}

// fail records why the fast path gave up (the first reason only) and
// returns false.
func (p *fastParser) fail(n *Node, format string, args ...any) bool {
	if p.why == "" {
		where := "a node"
		if n != nil && n.ID != "" && ValidID(n.ID) {
			where = "node '" + n.ID + "'"
		}
		p.why = where + ": " + fmt.Sprintf(format, args...)
	}
	return false
}

const (
	fID = 1 << iota
	fOrder
	fTitle
	fGoal
	fAcceptance
	fNext
	fPasses
	fAttempts
	fMaxAttempts
	fChildren
	fAll = 1<<iota - 1
)

// fieldNames are the fields in the order of the bits above.
var fieldNames = [...]string{"id", "order", "title", "goal", "acceptance", "next", "passes", "attempts", "max_attempts", "children"}

// ws skips JSON whitespace: mostly the canonical indentation, a newline
// and a run of spaces, taken eight at a time.
func (p *fastParser) ws() {
	b, i := p.b, p.i
	for i < len(b) {
		switch b[i] {
		case ' ':
			i++
			for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == 0x2020202020202020 {
				i += 8
			}
		case '\n', '\t', '\r':
			i++
		default:
			p.i = i
			return
		}
	}
	p.i = i
}

// next skips whitespace and consumes c when it comes next.
func (p *fastParser) next(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *fastParser) node(depth int) (*Node, bool) {
	if depth > fastMaxDepth {
		return nil, p.fail(nil, "nodes nest deeper than %d levels", fastMaxDepth)
	}
	if !p.next('{') {
		return nil, p.fail(nil, "not a JSON object")
	}
	n := &Node{}
	seen := 0
	if p.next('}') {
		return nil, p.fail(n, "missing %s", strings.Join(fieldNames[:], ", "))
	}
	for {
		p.ws()
		key, ok := p.string()
		if !ok || !p.next(':') {
			return nil, p.fail(n, "not valid JSON")
		}
		p.ws()
		var bit int
		switch key {
		case "id":
			bit = fID
			n.ID, ok = p.str(0, MaxIDLen)
			ok = ok && ValidID(n.ID)
		case "order":
			bit = fOrder
			n.Order, ok = p.integer(-(1<<53 - 1), 1<<53-1)
		case "title":
			bit = fTitle
			n.Title, ok = p.str(1, 256)
		case "goal":
			bit = fGoal
			n.Goal, ok = p.str(0, 16384)
		case "acceptance":
			bit = fAcceptance
			n.Acceptance, ok = p.strings(64, 4096)
		case "next":
			bit = fNext
			n.Next, ok = p.str(0, 16)
			ok = ok && (n.Next == NextExecute || n.Next == NextDecompose)
		case "passes":
			bit = fPasses
			n.Passes, ok = p.boolean()
		case "attempts":
			bit = fAttempts
			var v int64
			v, ok = p.integer(0, 1000000)
			n.Attempts = int(v)
		case "max_attempts":
			bit = fMaxAttempts
			var v int64
			v, ok = p.integer(0, 1000000)
			n.MaxAttempts = int(v)
		case "children":
			bit = fChildren
			n.Children, ok = p.children(depth)
		default:
			return nil, p.fail(n, "unknown field %q", key) // additionalProperties: false
		}
		if !ok {
			return nil, p.fail(n, "%s: not a valid value", key)
		}
		if seen&bit != 0 {
			return nil, p.fail(n, "%s: repeated", key)
		}
		seen |= bit
		if p.next(',') {
			continue
		}
		if p.next('}') {
			break
		}
		return nil, p.fail(n, "not valid JSON")
	}
	if seen != fAll {
		var missing []string
		for i, name := range fieldNames {
			if seen&(1<<i) == 0 {
				missing = append(missing, name)
			}
		}
		return nil, p.fail(n, "missing %s", strings.Join(missing, ", ")) // required
	}
	return n, true
}

// string reads a JSON string where the input is: a substring of the input
// when it has no escape, else its unescaped copy.
func (p *fastParser) string() (string, bool) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", false
	}
	s, start := p.s, p.i+1
	for j := start; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			p.i = j + 1
			return s[start:j], true
		case c == '\\':
			return p.unescape(start, j)
		case c < 0x20:
			return "", false
		}
	}
	return "", false
}

// unescape reads the rest of a string whose first escape is at j, as
// jsontext does: the escapes of RFC 8259, \u surrogates only as a valid
// pair.
func (p *fastParser) unescape(start, j int) (string, bool) {
	buf := []byte(p.s[start:j])
	for j < len(p.s) {
		c := p.s[j]
		switch {
		case c == '"':
			p.i = j + 1
			return string(buf), true
		case c < 0x20:
			return "", false
		case c != '\\':
			buf = append(buf, c)
			j++
			continue
		}
		if j+1 >= len(p.s) {
			return "", false
		}
		switch e := p.s[j+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(p.s, j+2)
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				r2, ok := hex4(p.s, j+8)
				if !ok || p.s[j+6] != '\\' || p.s[j+7] != 'u' {
					return "", false
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", false
				}
				j += 6
			}
			buf = utf8.AppendRune(buf, r)
			j += 4
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// hex4 reads the four hex digits at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// str reads a string of minRunes to maxRunes code points (JSON Schema
// counts code points, not bytes).
func (p *fastParser) str(minRunes, maxRunes int) (string, bool) {
	s, ok := p.string()
	if !ok || len(s) < minRunes {
		return "", false
	}
	if len(s) > maxRunes {
		if n := utf8.RuneCountInString(s); n > maxRunes {
			return "", false
		}
	}
	if minRunes > 0 && utf8.RuneCountInString(s) < minRunes {
		return "", false
	}
	return s, true
}

// number reads a JSON number literal.
func (p *fastParser) number() (string, bool) {
	s, j := p.s, p.i
	digits := func() bool {
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j > k
	}
	if j < len(s) && s[j] == '-' {
		j++
	}
	switch {
	case j < len(s) && s[j] == '0':
		j++
	case !digits():
		return "", false
	}
	if j < len(s) && s[j] == '.' {
		j++
		if !digits() {
			return "", false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if !digits() {
			return "", false
		}
	}
	v := s[p.i:j]
	p.i = j
	return v, true
}

// integer reads an integer within [lo, hi]. A plain literal is parsed as
// one; another spelling (1.0, 1e2) is read as the full path reads it, a
// float64 with no fraction (jsonstrict decodes numbers to float64), so
// that a command without the full validator accepts every valid tree.
func (p *fastParser) integer(lo, hi int64) (int64, bool) {
	v, ok := p.number()
	if !ok {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < '0' || c > '9') && !(i == 0 && c == '-') {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
				return 0, false
			}
			return int64(f), true
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

func (p *fastParser) boolean() (bool, bool) {
	switch {
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return true, true
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return false, true
	}
	return false, false
}

func (p *fastParser) strings(maxItems, maxRunes int) ([]string, bool) {
	if !p.next('[') {
		return nil, false
	}
	out := []string{}
	if p.next(']') {
		return out, true
	}
	for {
		if len(out) == maxItems {
			return nil, false
		}
		p.ws()
		s, ok := p.str(0, maxRunes)
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if p.next(',') {
			continue
		}
		return out, p.next(']')
	}
}

func (p *fastParser) children(depth int) ([]*Node, bool) {
	if !p.next('[') {
		return nil, false
	}
	out := []*Node{}
	if p.next(']') {
		return out, true
	}
	for {
		if len(out) == 10000 {
			return nil, false
		}
		c, ok := p.node(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, c)
		if p.next(',') {
			continue
		}
		return out, p.next(']')
	}
}

// ValidID reports whether s matches IDPattern.
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > MaxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-'):
		default:
			return false
		}
	}
	return true
}
