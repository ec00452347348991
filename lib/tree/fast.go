package tree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// fastParse decodes a task tree in one streaming pass, checking every
// constraint of schemas/task_tree.v1.schema.json inline. It returns the
// tree and true only for a document that jsonstrict and the schema accept
// (FuzzFastParse checks this against the full path, with the committed
// corpus replayed in CI); on anything unusual it gives up (false) and
// Parse takes the full path, jsonstrict and santhosh-tekuri/jsonschema,
// which also words the errors. It exists because the full path costs
// about 15 µs per node, most of it in generic validation, and every
// command of a step loads the tree.
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

// The schema's bounds (schemas/task_tree.v1.schema.json), as the fast
// path and Verify check them; lengths in code points.
const (
	maxOrder          = 1<<53 - 1 // |order|
	maxTitleRunes     = 256
	maxGoalRunes      = 16384
	maxAcceptance     = 64 // criteria
	maxCriterionRunes = 4096
	maxAttemptsValue  = 1000000 // attempts and max_attempts
	maxChildren       = 10000
)

// fastParser allocates little per node, since in a command that loads a
// tree once, fresh heap (and its page faults) is most of the load's cost
// (issue 16): the nodes come from slabs, a node's strings share one
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
	fWaiting
	fAnswers
	// fAll are the required fields: waiting and answers are optional.
	fAll = fChildren<<1 - 1
)

// fieldNames are the fields in the order of the bits above.
var fieldNames = [...]string{"id", "order", "title", "goal", "acceptance", "next", "passes", "attempts", "max_attempts", "children", "waiting", "answers"}

func (p *fastParser) node(depth int) (*Node, bool) {
	if depth > fastMaxDepth {
		return nil, p.fail("", "nodes nest deeper than %d levels", fastMaxDepth)
	}
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, p.fail("", "not a JSON object")
	}
	n := p.newNode()
	base, spanBase := len(p.buf), len(p.spans)
	var id, title, goal span
	idOf := func() string { return string(p.buf[id.start:id.end]) }
	seen := 0
	for {
		tok, err := p.dec.ReadToken()
		if err != nil {
			return nil, p.fail(idOf(), "not valid JSON")
		}
		if tok.Kind() == '}' {
			break
		}
		var bit int
		ok := true
		switch tok.String() { // the token is voided by the next read
		case "id":
			bit = fID
			id, ok = p.str(0, MaxIDLen)
			ok = ok && ValidID(idOf())
		case "order":
			bit = fOrder
			n.Order, ok = p.integer(-maxOrder, maxOrder)
		case "title":
			bit = fTitle
			title, ok = p.str(1, maxTitleRunes)
		case "goal":
			bit = fGoal
			goal, ok = p.str(0, maxGoalRunes)
		case "acceptance":
			bit = fAcceptance
			n.Acceptance, ok = p.strings(maxAcceptance, maxCriterionRunes)
		case "next":
			bit = fNext
			var next span
			next, ok = p.str(0, 16)
			switch string(p.buf[next.start:next.end]) {
			case NextExecute:
				n.Next = NextExecute
			case NextDecompose:
				n.Next = NextDecompose
			default:
				ok = false
			}
		case "passes":
			bit = fPasses
			n.Passes, ok = p.boolean()
		case "attempts":
			bit = fAttempts
			var v int64
			v, ok = p.integer(0, maxAttemptsValue)
			n.Attempts = int(v)
		case "max_attempts":
			bit = fMaxAttempts
			var v int64
			v, ok = p.integer(0, maxAttemptsValue)
			n.MaxAttempts = int(v)
		case "children":
			bit = fChildren
			n.Children, ok = p.children(depth)
		default:
			if bit, ok = p.optional(tok.String(), n); bit == 0 {
				return nil, p.fail(idOf(), "unknown field %q", tok.String()) // additionalProperties: false
			}
		}
		key := fieldNames[bits.TrailingZeros(uint(bit))]
		if !ok {
			return nil, p.fail(idOf(), "%s: not a valid value", key)
		}
		if seen&bit != 0 {
			return nil, p.fail(idOf(), "%s: repeated", key)
		}
		seen |= bit
	}
	if seen&fAll != fAll {
		var missing []string
		for i, name := range fieldNames {
			if seen&(1<<i) == 0 && 1<<i&fAll != 0 {
				missing = append(missing, name)
			}
		}
		return nil, p.fail(idOf(), "missing %s", strings.Join(missing, ", ")) // required
	}
	// The node's strings: one allocation, cut.
	s := string(p.buf[base:])
	cut := func(sp span) string { return s[sp.start-base : sp.end-base] }
	n.ID, n.Title, n.Goal = cut(id), cut(title), cut(goal)
	for i, sp := range p.spans[spanBase:] {
		n.Acceptance[i] = cut(sp)
	}
	p.buf, p.spans = p.buf[:base], p.spans[:spanBase]
	return n, true
}

// str reads a string of minRunes to maxRunes code points (JSON Schema
// counts code points, not bytes), unquoted onto buf.
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
	if len(s) > maxRunes {
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

// optional reads one of a node's optional fields, waiting and answers,
// into n: its bit, and whether its value is valid; bit 0 for a key that
// is none of them.
func (p *fastParser) optional(key string, n *Node) (bit int, ok bool) {
	switch key {
	case "waiting":
		var w span
		if w, ok = p.str(1, maxGoalRunes); ok {
			n.Waiting = string(p.buf[w.start:w.end])
			p.buf = p.buf[:w.start]
		}
		return fWaiting, ok
	case "answers":
		n.Answers, ok = p.answers()
		return fAnswers, ok
	}
	return 0, false
}

// answers reads a node's answers: at most MaxAnswers objects of exactly a
// question and an answer, each 1 to maxGoalRunes code points. They are
// rare, so their strings are copied off buf at once.
func (p *fastParser) answers() ([]Answer, bool) {
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	out := []Answer{}
	for p.dec.PeekKind() != ']' {
		if len(out) == MaxAnswers {
			return nil, false
		}
		a, ok := p.answer()
		if !ok {
			return nil, false
		}
		out = append(out, a)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, false
	}
	if len(out) == 0 {
		return nil, true // as the full path builds it
	}
	return out, true
}

// answer reads one answer object.
func (p *fastParser) answer() (Answer, bool) {
	var a Answer
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return a, false
	}
	seen := 0
	for {
		tok, err := p.dec.ReadToken()
		if err != nil {
			return a, false
		}
		if tok.Kind() == '}' {
			return a, seen == 3
		}
		var dst *string
		bit := 0
		switch tok.String() {
		case "question":
			dst, bit = &a.Question, 1
		case "answer":
			dst, bit = &a.Answer, 2
		default:
			return a, false // additionalProperties: false
		}
		if seen&bit != 0 {
			return a, false
		}
		seen |= bit
		sp, ok := p.str(1, maxGoalRunes)
		if !ok {
			return a, false
		}
		*dst = string(p.buf[sp.start:sp.end])
		p.buf = p.buf[:sp.start]
	}
}

func (p *fastParser) children(depth int) ([]*Node, bool) {
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	base := len(p.kids)
	for p.dec.PeekKind() != ']' {
		if len(p.kids)-base == maxChildren {
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
