package tree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/treeloop/treeloop/lib/schema"
)

// fastParse decodes a task tree in one streaming pass, checking every
// constraint of schemas/task_tree.v1.schema.json inline. It returns the
// tree and true only for a document that jsonstrict and the schema accept
// (FuzzFastParse checks this against the full path, with the committed
// corpus replayed in CI); on anything unusual it gives up (false) and
// Parse takes the full path, jsonstrict and santhosh-tekuri/jsonschema,
// which also words the errors. It exists because the full path's generic
// validation is most of the cost of loading a tree, and every command of
// a step loads the tree (bench/fastpaths.md).
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
	// jsontext's own duplicate-name tracking is redundant here: node()
	// refuses a repeated field itself, and any other name at all.
	p := fastParser{dec: jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true))}
	root, ok := p.node(0)
	if !ok {
		if p.why == "" {
			p.why = "not a task tree"
		}
		return nil, p.why
	}
	if _, err := p.dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, "data after the tree"
	}
	return root, ""
}

// fastMaxDepth bounds node nesting on the fast path, well inside
// jsonstrict.MaxDepth (each node level nests two JSON levels).
const fastMaxDepth = 400

// fastParser allocates little per node, since in a command that loads a
// tree once, fresh heap (and its page faults) is most of the load's cost
// The nodes come from slabs, a node's strings share one
// allocation (their bytes gathered in buf, a stack the nodes being parsed
// share, and cut into substrings when the node ends), field names are
// matched without a copy, and next takes the package's constants.
type fastParser struct {
	dec   *jsontext.Decoder
	why   string  // the first problem met, for fastParseWhy
	buf   []byte  // unquoted string bytes of the open nodes, innermost last
	spans []span  // acceptance items of the open nodes, innermost last
	kids  []*Node // children of the open nodes' arrays, innermost last
	slab  []Node  // where the next nodes are allocated
}

// span is a string's bytes in fastParser.buf.
type span struct{ start, end int }

// newNode returns a zero node from the current slab, starting a new one
// (twice as large, up to 1,024 nodes) when it is used up.
func (p *fastParser) newNode() *Node {
	if len(p.slab) == 0 {
		size := 2 * cap(p.slab)
		size = min(max(size, 16), 1024)
		p.slab = make([]Node, size)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	return n
}

// fail records why the fast path gave up (the first reason only) and
// returns false. id is the id the node has read so far ("" for none).
func (p *fastParser) fail(id string, format string, args ...any) bool {
	if p.why == "" {
		where := "a node"
		if id != "" && ValidID(id) {
			where = "node '" + id + "'"
		}
		p.why = where + ": " + fmt.Sprintf(format, args...)
	}
	return false
}

// The node's fields, their bits, table (nodeFields), bounds and readers
// (fastParser.field), are generated from the schema into fast_gen.go.
//
//go:generate go run ../schema/internal/schemagen -schema task_tree.v1 -stream node -type Node -o fast_gen.go

func (p *fastParser) node(depth int) (*Node, bool) {
	if depth > fastMaxDepth {
		return nil, p.fail("", "nodes nest deeper than %d levels", fastMaxDepth)
	}
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, p.fail("", "not a JSON object")
	}
	n := p.newNode()
	base, spanBase := len(p.buf), len(p.spans)
	var spans nodeSpans
	idOf := func() string { return p.text(spans.id) }
	seen := 0
	for {
		tok, err := p.dec.ReadToken()
		if err != nil {
			return nil, p.fail(idOf(), "not valid JSON")
		}
		if tok.Kind() == '}' {
			break
		}
		bit, ok := p.field(tok.String(), n, &spans, depth) // the token is voided by the next read
		if bit == 0 {
			return nil, p.fail(idOf(), "unknown field %q", tok.String()) // additionalProperties: false
		}
		key := nodeFields[bits.TrailingZeros(uint(bit))].key
		if !ok {
			return nil, p.fail(idOf(), "%s: not a valid value", key)
		}
		if seen&bit != 0 {
			return nil, p.fail(idOf(), "%s: repeated", key)
		}
		seen |= bit
	}
	if seen&fRequired != fRequired {
		var missing []string
		for i, f := range nodeFields {
			if fRequired&(1<<i) != 0 && seen&(1<<i) == 0 {
				missing = append(missing, f.key)
			}
		}
		return nil, p.fail(idOf(), "missing %s", strings.Join(missing, ", ")) // required
	}
	// The node's strings: one allocation, cut.
	s := string(p.buf[base:])
	cut := func(sp span) string { return s[sp.start-base : sp.end-base] }
	spans.set(n, cut)
	for i, sp := range p.spans[spanBase:] {
		n.Acceptance[i] = cut(sp)
	}
	p.buf, p.spans = p.buf[:base], p.spans[:spanBase]
	return n, true
}

// text is the string of a span of buf.
func (p *fastParser) text(sp span) string { return string(p.buf[sp.start:sp.end]) }

// readInt reads an integer within [lo, hi] into dst.
func readInt[T int | int64](p *fastParser, dst *T, lo, hi int64) bool {
	v, ok := p.integer(lo, hi)
	*dst = T(v)
	return ok
}

// enum reads a string that is one of values and returns that value (no
// copy).
func (p *fastParser) enum(values ...string) (string, bool) {
	sp, ok := p.str(0, -1)
	if !ok {
		return "", false
	}
	got := p.buf[sp.start:sp.end]
	p.buf = p.buf[:sp.start]
	for _, v := range values {
		if string(got) == v {
			return v, true
		}
	}
	return "", false
}

// str reads a string of minRunes to maxRunes code points (JSON Schema
// counts code points, not bytes; a negative maxRunes is no bound),
// unquoted onto buf.
func (p *fastParser) str(minRunes, maxRunes int) (span, bool) {
	v, err := p.dec.ReadValue()
	if err != nil || v.Kind() != '"' {
		return span{}, false
	}
	start := len(p.buf)
	if p.buf, err = jsontext.AppendUnquote(p.buf, v); err != nil {
		p.buf = p.buf[:start]
		return span{}, false
	}
	s := p.buf[start:]
	if len(s) < minRunes {
		return span{}, false
	}
	if maxRunes >= 0 && len(s) > maxRunes {
		if n := utf8.RuneCount(s); n > maxRunes {
			return span{}, false
		}
	}
	if minRunes > 0 && utf8.RuneCount(s) < minRunes {
		return span{}, false
	}
	return span{start, len(p.buf)}, true
}

// integer reads an integer within [lo, hi]. A plain literal is parsed as
// one; another spelling (1.0, 1e2) is read as the full path reads it, a
// float64 with no fraction (jsonstrict decodes numbers to float64), so
// that a command without the full validator accepts every valid tree.
func (p *fastParser) integer(lo, hi int64) (int64, bool) {
	v, err := p.dec.ReadValue()
	if err != nil || v.Kind() != '0' {
		return 0, false
	}
	for i, c := range v {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
				return 0, false
			}
			return int64(f), true
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

func (p *fastParser) boolean() (bool, bool) {
	tok, err := p.dec.ReadToken()
	if err != nil {
		return false, false
	}
	switch tok.Kind() {
	case 't':
		return true, true
	case 'f':
		return false, true
	}
	return false, false
}

// stringField is one string property of an object in an array of
// objects (a node's answers, say): its name, where it goes, and its
// bounds in code points (a negative maxRunes is no bound).
type stringField struct {
	name               string
	dst                *string
	minRunes, maxRunes int
}

// readObjects reads an array of at most maxItems closed objects of
// string properties, all required: fields gives the properties of the
// item being read. Such arrays are rare, so their strings are copied off
// buf at once. An empty array reads as nil when the property is optional
// (it is absent from a canonical file), else as an empty slice.
func readObjects[T any](p *fastParser, maxItems int, optional bool, fields func(*T) []stringField) ([]T, bool) {
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	out := []T{}
	for p.dec.PeekKind() != ']' {
		if len(out) == maxItems {
			return nil, false
		}
		var item T
		if !p.object(fields(&item)) {
			return nil, false
		}
		out = append(out, item)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, false
	}
	if len(out) == 0 && optional {
		return nil, true
	}
	return out, true
}

// object reads one object of exactly fields.
func (p *fastParser) object(fields []stringField) bool {
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	seen := 0
	for {
		tok, err := p.dec.ReadToken()
		if err != nil {
			return false
		}
		if tok.Kind() == '}' {
			return seen == 1<<len(fields)-1
		}
		i := slices.IndexFunc(fields, func(f stringField) bool { return f.name == tok.String() })
		if i < 0 || seen&(1<<i) != 0 {
			return false // additionalProperties: false, or repeated
		}
		seen |= 1 << i
		sp, ok := p.str(fields[i].minRunes, fields[i].maxRunes)
		if !ok {
			return false
		}
		*fields[i].dst = string(p.buf[sp.start:sp.end])
		p.buf = p.buf[:sp.start]
	}
}

// strings reads an array of at most maxItems strings of at most maxRunes
// code points each: the items' bytes go onto buf and their spans onto
// spans, and the slice returned is filled in when the node ends.
func (p *fastParser) strings(maxItems, maxRunes int) ([]string, bool) {
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	k := 0
	for p.dec.PeekKind() != ']' {
		if k == maxItems {
			return nil, false
		}
		sp, ok := p.str(0, maxRunes)
		if !ok {
			return nil, false
		}
		p.spans = append(p.spans, sp)
		k++
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, false
	}
	if k == 0 {
		return []string{}, true
	}
	return make([]string, k), true
}

func (p *fastParser) children(depth, maxItems int) ([]*Node, bool) {
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	base := len(p.kids)
	for p.dec.PeekKind() != ']' {
		if len(p.kids)-base == maxItems {
			return nil, false
		}
		c, ok := p.node(depth + 1)
		if !ok {
			return nil, false
		}
		p.kids = append(p.kids, c)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, false
	}
	if len(p.kids) == base {
		return []*Node{}, true
	}
	out := append([]*Node(nil), p.kids[base:]...)
	clear(p.kids[base:])
	p.kids = p.kids[:base]
	return out, true
}

// ValidID reports whether s matches IDPattern.
func ValidID(s string) bool { return schema.MatchID(s) }
