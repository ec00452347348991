package schema

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The helpers below are what the generated plain checks call (files named
// *_gen.go, written by lib/schema/internal/schemagen from schemas/*.json
// through `go generate`). A plain check takes a document decoded by
// jsonstrict (map[string]any, []any, string, float64, bool, nil) and
// returns "" when the schema accepts it, else its first problem as
// "<pointer>: <what>"; it does not link the full validator.

// Prop is one property of an object schema and the check of its value.
type Prop struct {
	Name  string
	Check func(x any, ptr string) string
}

// Fail is the problem what at the instance location ptr ("" is the
// document, written "/").
func Fail(ptr, what string) string {
	if ptr == "" {
		ptr = "/"
	}
	return ptr + ": " + what
}

// Object checks x, which must be an object at ptr: every name of required
// present, no name outside props when closed (additionalProperties:
// false), and each present property's value by its check, in props'
// order. Unknown names are reported in sorted order.
func Object(x any, ptr string, required []string, props []Prop, closed bool) string {
	m, ok := x.(map[string]any)
	if !ok {
		return Fail(ptr, "not a JSON object")
	}
	for _, name := range required {
		if _, ok := m[name]; !ok {
			return Fail(ptr, "missing property "+name)
		}
	}
	known := 0
	for _, p := range props {
		if v, ok := m[p.Name]; ok {
			known++
			if why := p.Check(v, ptr+"/"+p.Name); why != "" {
				return why
			}
		}
	}
	if closed && known != len(m) {
		return unknown(m, ptr, props)
	}
	return ""
}

// Entries checks the object x at ptr name by name, in sorted order: each
// name by names (propertyNames; the name is the value it checks, at
// ptr/<name>), then the value of each name listed does not hold by extra
// (additionalProperties as a schema). A nil check checks nothing; x that
// is not an object passes (Object has judged it).
func Entries(x any, ptr string, listed []string, names, extra func(any, string) string) string {
	m, ok := x.(map[string]any)
	if !ok {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first problem is the same every time
	for _, k := range keys {
		at := ptr + "/" + Token(k)
		if names != nil {
			if why := names(k, at); why != "" {
				return why
			}
		}
		if extra != nil && !slices.Contains(listed, k) {
			if why := extra(m[k], at); why != "" {
				return why
			}
		}
	}
	return ""
}

// Token is an object's member name as a JSON Pointer's reference token
// (RFC 6901: "~" as "~0", "/" as "~1"), with the bytes that would break a
// one-line problem (controls, DEL) percent-encoded as the full validator
// encodes them ("%0A"): a name a document chose, in a problem's pointer.
func Token(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '~':
			b.WriteString("~0")
		case c == '/':
			b.WriteString("~1")
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// unknown is the problem of the first name of m, in sorted order, that
// props does not name.
func unknown(m map[string]any, ptr string, props []Prop) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first problem is the same every time
	for _, k := range keys {
		found := false
		for _, p := range props {
			found = found || p.Name == k
		}
		if !found {
			return ptr + "/" + Token(k) + ": unknown property"
		}
	}
	return ""
}

// Items checks the array a at ptr: from minItems to maxItems items (a
// negative maxItems is no bound), each by item when item is not nil.
func Items(a []any, ptr string, minItems, maxItems int, item func(any, string) string) string {
	if len(a) < minItems {
		return Fail(ptr, "fewer than "+strconv.Itoa(minItems)+" items")
	}
	if maxItems >= 0 && len(a) > maxItems {
		return Fail(ptr, "more than "+strconv.Itoa(maxItems)+" items")
	}
	if item == nil {
		return ""
	}
	for i, x := range a {
		if why := item(x, ptr+"/"+strconv.Itoa(i)); why != "" {
			return why
		}
	}
	return ""
}

// Integer returns x as a number when it is one with no fraction (JSON
// Schema's integer: 1.0 is one).
func Integer(x any) (float64, bool) {
	f, ok := x.(float64)
	return f, ok && f == math.Trunc(f)
}

// Runes reports whether s has minRunes to maxRunes code points (a negative
// maxRunes is no bound); an invalid byte counts as the one U+FFFD it is
// read as.
func Runes(s string, minRunes, maxRunes int) bool {
	if len(s) < minRunes {
		return false
	}
	if minRunes <= 1 && (maxRunes < 0 || len(s) <= maxRunes) {
		return len(s) >= minRunes // every code point is at least one byte
	}
	n := utf8.RuneCountInString(s)
	return n >= minRunes && (maxRunes < 0 || n <= maxRunes)
}

// OneOf reports whether s is one of values (an enum of strings).
func OneOf(s string, values ...string) bool {
	for _, v := range values {
		if s == v {
			return true
		}
	}
	return false
}

// Match reports whether s matches the schema pattern: through the
// pattern's plain matcher (Matchers) where it has one, else a regexp
// compiled on first use.
func Match(pattern, s string) bool {
	if f, ok := Matchers[pattern]; ok {
		return f(s)
	}
	re, _ := compiled.Load(pattern)
	if re == nil {
		re, _ = compiled.LoadOrStore(pattern, regexp.MustCompile(pattern))
	}
	return re.(*regexp.Regexp).MatchString(s)
}

var compiled sync.Map // pattern → *regexp.Regexp

// IDPattern is the pattern of node, run and record ids (DESIGN.md
// decision 8); MatchID checks it.
const IDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`

// Matchers are plain matchers of the patterns the schemas use, each
// equal to its regexp (TestMatchersAgreeWithRegexp): a compiled regexp of
// IDPattern unrolls the counted repetition, a cost at every program's
// start-up (bench/fastpaths.md).
var Matchers = map[string]func(string) bool{
	IDPattern:           MatchID,
	`^[0-9a-f]{40,64}$`: matchHexSHA,
	`^[a-z][a-z0-9_]*$`: matchWord,
}

// MatchID reports whether s matches IDPattern.
func MatchID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
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

// matchHexSHA matches ^[0-9a-f]{40,64}$.
func matchHexSHA(s string) bool {
	if len(s) < 40 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// matchWord matches ^[a-z][a-z0-9_]*$.
func matchWord(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
