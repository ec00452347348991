package eval

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/treeloop/treeloop/lib/tomlkey"
)

// caseDoc is a case file as go-toml's strict decoder reads it: a key not
// here is an unknown key; a pointer tells an absent key from an empty one.
type caseDoc struct {
	Case     *caseTable               `toml:"case"`
	Config   map[string]any           `toml:"config"`
	Backends map[string]*backendTable `toml:"backends"`
	Checks   []checkTable             `toml:"checks"`
}

type caseTable struct {
	ID          *string `toml:"id"`
	Description string  `toml:"description"`
	Goal        string  `toml:"goal"`
	GoalFile    string  `toml:"goal_file"`
	Fixture     string  `toml:"fixture"`
	RootNext    string  `toml:"root_next"`
	TimeoutSecs *int    `toml:"timeout_secs"`
	Expect      string  `toml:"expect"`
}

type backendTable struct {
	Backend          *string  `toml:"backend"`
	Bin              string   `toml:"bin"`
	Model            string   `toml:"model"`
	DecomposeModel   string   `toml:"decompose_model"`
	ExecuteModel     string   `toml:"execute_model"`
	LastAttemptModel string   `toml:"last_attempt_model"`
	ExtraArgs        []string `toml:"extra_args"`
	Env              []string `toml:"env"`
}

// checkTable is one [[checks]] entry; every key any kind takes is here,
// and which of them a kind takes is checkKeys'.
type checkTable struct {
	Type        *string   `toml:"type"`
	Name        string    `toml:"name"`
	Path        *string   `toml:"path"`
	Pattern     *string   `toml:"pattern"`
	Cmd         *[]string `toml:"cmd"`
	TimeoutSecs *int      `toml:"timeout_secs"`
	Query       *string   `toml:"query"`
	Equals      any       `toml:"equals"`
	Exists      *bool     `toml:"exists"`
	Min         *int      `toml:"min"`
	Max         *int      `toml:"max"`
}

// keys are the keys the entry has besides type and name, sorted.
func (c checkTable) keys() []string {
	var ks []string
	for k, set := range map[string]bool{
		"path": c.Path != nil, "pattern": c.Pattern != nil, "cmd": c.Cmd != nil, "timeout_secs": c.TimeoutSecs != nil,
		"query": c.Query != nil, "equals": c.Equals != nil, "exists": c.Exists != nil, "min": c.Min != nil, "max": c.Max != nil,
	} {
		if set {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

// decoder decodes one TOML file strictly into a Go value and words every
// problem as one line at its key's line and column (Problem).
type decoder struct {
	file  string
	idx   tomlkey.Index
	probs Problems
	// inCheck holds the unknown keys of each [[checks]] element, worded
	// by checkKeys with what a check of its type takes.
	inCheck map[int][]tomlkey.Pos
}

// decode reads data into v with go-toml's strict decoder. It reports
// false when v could not be filled: a syntax error or a value of the wrong
// type, which stops the decoding (one problem). Unknown keys are all
// problems, and v is filled all the same.
func (d *decoder) decode(data []byte, v any) bool {
	d.idx = tomlkey.Of(data)
	err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(v)
	var strict *toml.StrictMissingError
	var de *toml.DecodeError
	switch {
	case err == nil:
	case errors.As(err, &strict):
		for i := range strict.Errors {
			d.unknown(&strict.Errors[i])
		}
	case errors.As(err, &de):
		d.wrongType(de, reflect.TypeOf(v).Elem())
		return false
	default:
		d.probs = append(d.probs, Problem{File: d.file, Msg: strings.TrimPrefix(err.Error(), "toml: ")})
		return false
	}
	return true
}

// unknown words one key the strict decoder found no place for:
// unknown key "case.colour", unknown key "checks[2].colour".
func (d *decoder) unknown(de *toml.DecodeError) {
	line, col := de.Position()
	key := tomlkey.Join(de.Key())
	if p, ok := d.idx.At(line, col); ok {
		key = joinElem(p)
	}
	what := "key"
	if strings.HasSuffix(de.Error(), "missing table") {
		what = "table"
	} else if p, ok := d.idx.At(line, col); ok && p.N >= 0 && len(p.Key) == 2 && p.Key[0] == "checks" {
		if d.inCheck == nil {
			d.inCheck = map[int][]tomlkey.Pos{}
		}
		d.inCheck[p.N] = append(d.inCheck[p.N], p)
		return
	}
	d.probs = append(d.probs, Problem{File: d.file, Line: line, Col: col, Msg: fmt.Sprintf("unknown %s %q", what, key)})
}

// joinElem writes p's key with the element of its array table:
// "checks[2].colour".
func joinElem(p tomlkey.Pos) string {
	if p.N < 0 || len(p.Key) == 0 {
		return tomlkey.Join(p.Key)
	}
	head := tomlkey.Join(p.Key[:1]) + "[" + strconv.Itoa(p.N) + "]"
	if len(p.Key) == 1 {
		return head
	}
	return head + "." + tomlkey.Join(p.Key[1:])
}

// mismatch matches go-toml's type errors: the TOML type, the Go type.
var mismatch = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^cannot decode TOML (.+?) into (?:struct field \S+ of type )?(\S+)$`)
})

// wrongType words a decoding error (into, the type decoded into): a value
// of the wrong type as "timeout_secs must be an integer, got a string" at
// its key, a syntax error as go-toml words it at its position.
func (d *decoder) wrongType(de *toml.DecodeError, into reflect.Type) {
	line, col := de.Position()
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	key := de.Key()
	if len(key) == 0 {
		d.probs = append(d.probs, Problem{File: d.file, Line: line, Col: col, Msg: msg})
		return
	}
	if p, ok := d.idx.Owner(key, line, col); ok {
		key, line, col = p.Key, p.Line, p.Col
	}
	m := mismatch().FindStringSubmatch(msg)
	field, ok := fieldType(into, key)
	want := describe(field)
	if m == nil || !ok || want == "" {
		d.probs = append(d.probs, Problem{File: d.file, Line: line, Col: col, Msg: tomlkey.Join(key) + ": " + msg})
		return
	}
	got := article(m[1])
	if field.Kind() == reflect.Slice && !strings.HasPrefix(m[2], "[]") {
		got = "an array holding " + got // an element of the wrong type
	}
	name := key[len(key)-1]
	if field.Kind() == reflect.Struct || field.Kind() == reflect.Map || field.Kind() == reflect.Slice && field.Elem().Kind() == reflect.Struct {
		name = tomlkey.Join(key)
	}
	d.probs = append(d.probs, Problem{File: d.file, Line: line, Col: col, Msg: fmt.Sprintf("%s must be %s, got %s", name, want, got)})
}

// fieldType is the Go type the value at key decodes into, pointers
// followed (the elements of an array of tables stand for it).
func fieldType(t reflect.Type, key []string) (reflect.Type, bool) {
	for _, k := range key {
		t = deref(t)
		if t.Kind() == reflect.Slice && deref(t.Elem()).Kind() == reflect.Struct {
			t = deref(t.Elem())
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, k)
			if !ok {
				return nil, false
			}
			t = f
		case reflect.Map:
			t = t.Elem()
		default:
			return nil, false
		}
	}
	return deref(t), true
}

func fieldByTag(t reflect.Type, tag string) (reflect.Type, bool) {
	for f := range t.Fields() {
		if f.Tag.Get("toml") == tag {
			return f.Type, true
		}
	}
	return nil, false
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// describe names what a Go type takes, for a reader of the TOML file; ""
// for a type that takes any value.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "a table"
	case reflect.Slice:
		if deref(t.Elem()).Kind() == reflect.Struct {
			return "an array of tables ([[checks]])"
		}
		if t.Elem().Kind() == reflect.String {
			return "an array of strings"
		}
	}
	return ""
}

// article puts "a" or "an" before a TOML type's name.
func article(typ string) string {
	if strings.IndexByte("aeiou", typ[0]) >= 0 {
		return "an " + typ
	}
	return "a " + typ
}

// at records a problem at key's position in element n of its array
// table (-1: none), or at the nearest enclosing table's; without a
// position when none is found.
func (d *decoder) at(key []string, n int, format string, args ...any) {
	p := Problem{File: d.file, Msg: fmt.Sprintf(format, args...)}
	for k := key; len(k) > 0; k = k[:len(k)-1] {
		if pos, ok := d.idx.Find(k, n); ok {
			p.Line, p.Col = pos.Line, pos.Col
			break
		}
	}
	d.probs = append(d.probs, p)
}

// sorted is the problems in file order, those without a line first.
func (d *decoder) sorted() Problems {
	sort.SliceStable(d.probs, func(i, j int) bool {
		a, b := d.probs[i], d.probs[j]
		return a.Line < b.Line || a.Line == b.Line && a.Col < b.Col
	})
	return d.probs
}
