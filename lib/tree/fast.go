package tree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
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

type fastParser struct {
	dec *jsontext.Decoder
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

func (p *fastParser) node(depth int) (*Node, bool) {
	if depth > fastMaxDepth {
		return nil, p.fail(nil, "nodes nest deeper than %d levels", fastMaxDepth)
	}
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, p.fail(nil, "not a JSON object")
	}
	n := &Node{}
	seen := 0
	for {
		tok, err := p.dec.ReadToken()
		if err != nil {
			return nil, p.fail(n, "not valid JSON")
		}
		if tok.Kind() == '}' {
			break
		}
		var bit int
		ok := true
		key := tok.String() // the token is voided by the next read
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

// str reads a string of minRunes to maxRunes code points (JSON Schema
// counts code points, not bytes).
func (p *fastParser) str(minRunes, maxRunes int) (string, bool) {
	tok, err := p.dec.ReadToken()
	if err != nil || tok.Kind() != '"' {
		return "", false
	}
	s := tok.String()
	if len(s) < minRunes {
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

func (p *fastParser) strings(maxItems, maxRunes int) ([]string, bool) {
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	out := []string{}
	for p.dec.PeekKind() != ']' {
		if len(out) == maxItems {
			return nil, false
		}
		s, ok := p.str(0, maxRunes)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, false
	}
	return out, true
}

func (p *fastParser) children(depth int) ([]*Node, bool) {
	if tok, err := p.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	out := []*Node{}
	for p.dec.PeekKind() != ']' {
		if len(out) == 10000 {
			return nil, false
		}
		c, ok := p.node(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, c)
	}
	if _, err := p.dec.ReadToken(); err != nil {
		return nil, false
	}
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
