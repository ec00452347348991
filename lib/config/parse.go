package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"

	"github.com/treeloop/treeloop/lib/tomlkey"
)

// Parse decodes a config.toml document: keys it leaves out keep their
// Default values, unknown keys and wrong types are errors, and the result is
// validated. name is the file name used in error messages. Decoding errors are
// an *Error and validation errors an Errors; every message is one line,
// "name:line: ..." when the line is known, and names the key.
func Parse(name string, data []byte) (Config, error) {
	c := Default()
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, decodeError(name, data, err)
	}
	// An explicit "extra_args = []" and an absent key mean the same.
	if c.Agent.ExtraArgs == nil {
		c.Agent.ExtraArgs = []string{}
	}
	if c.Agent.Prices == nil {
		c.Agent.Prices = map[string]Price{}
	}
	if c.Agent.Fallback == nil {
		c.Agent.Fallback = []string{}
	}
	if c.Setup.Commands == nil {
		c.Setup.Commands = [][]string{}
	}
	if c.Sandbox.Writable == nil {
		c.Sandbox.Writable = []string{}
	}
	if c.Sandbox.Readable == nil {
		c.Sandbox.Readable = []string{}
	}
	for _, l := range []*[]string{&c.Guard.Ratchet, &c.Guard.Witness, &c.Guard.TestFiles, &c.Guard.SuiteNodes} {
		if *l == nil {
			*l = []string{}
		}
	}
	if c.ProtectedPaths == nil {
		c.ProtectedPaths = []string{}
	}
	for _, h := range []*[]string{&c.Hooks.OnIteration, &c.Hooks.OnComplete, &c.Hooks.OnStuck, &c.Hooks.OnLimit, &c.Hooks.OnError, &c.Hooks.OnQuestion, &c.Hooks.OnPause} {
		if *h == nil {
			*h = []string{}
		}
	}
	if err := c.Validate(); err != nil {
		var es Errors
		if errors.As(err, &es) {
			for _, e := range es {
				e.File = name
			}
		}
		return Config{}, err
	}
	return c, nil
}

// decodeError turns go-toml's errors into one-line messages naming the key
// and its line.
func decodeError(name string, data []byte, err error) error {
	var strictErr *toml.StrictMissingError
	if errors.As(err, &strictErr) && len(strictErr.Errors) > 0 {
		idx := tomlkey.Of(data)
		var es Errors
		for i := range strictErr.Errors {
			de := &strictErr.Errors[i]
			line, col := de.Position()
			key := de.Key()
			// Keys inside inline tables come without their table; the
			// index knows the whole path from the key's position.
			if k, ok := idx.At(line, col); ok {
				key = k.Key
			}
			what := "key"
			if strings.HasSuffix(de.Error(), "missing table") {
				what = "table"
			}
			k := tomlkey.Join(key)
			msg := fmt.Sprintf("unknown %s %q", what, k)
			if s := suggest(key); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			es = append(es, &Error{File: name, Line: line, Key: k, Msg: msg})
		}
		if len(es) == 1 {
			return es[0]
		}
		return es
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := mismatch().FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("cannot decode %s into %s", m[1], goType(m[2]))
		}
		e := &Error{File: name, Line: line, Msg: oneLine(msg)}
		if key := de.Key(); len(key) > 0 {
			e.Key = tomlkey.Join(key)
			e.Msg = e.Key + ": " + e.Msg
			// Report the line of the key: go-toml sometimes points
			// elsewhere (a nested array's error lands on line 1).
			if l, ok := tomlkey.Of(data).Line(e.Key, line); ok {
				e.Line = l
			}
		}
		return e
	}
	var durErr *durationError
	if errors.As(err, &durErr) {
		const key = "agent.max_pause"
		line, _ := tomlkey.Of(data).Line(key, 0)
		return &Error{File: name, Line: line, Key: key, Msg: key + ": " + durErr.Error()}
	}
	return &Error{File: name, Msg: oneLine(strings.TrimPrefix(err.Error(), "toml: "))}
}

// mismatch is compiled on first use (an error), not at every start of a
// program that reads the configuration.
var mismatch = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^cannot decode TOML (.+?) into (?:struct field \S+ of type )?(\S+)$`)
})

// goType names a target type for a reader of the TOML file.
func goType(t string) string {
	switch {
	case t == "[]string":
		return "array of strings"
	case strings.HasPrefix(t, "config."):
		return "table"
	case t == "float64":
		return "float"
	}
	return t
}

// oneLine escapes line breaks and other control characters.
func oneLine(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f }) < 0 {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// knownKeys are the dotted keys of Config, from its toml tags, walked on
// first use (an unknown key), not at every start.
var knownKeys = sync.OnceValue(func() []string {
	var keys []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for f := range t.Fields() {
			k := prefix + f.Tag.Get("toml")
			keys = append(keys, k)
			if f.Type.Kind() == reflect.Struct {
				walk(k+".", f.Type)
			}
		}
	}
	walk("", reflect.TypeFor[Config]())
	return keys
})

// suggest is the known key an unknown one was probably meant to be: the
// closest by its last part (a misspelling, or a key under the wrong
// table), within a third of its length in edits, a key of the same table
// before one of another (a table change counts as one edit); "" when none
// is.
func suggest(key []string) string {
	if len(key) == 0 {
		return ""
	}
	last := key[len(key)-1]
	table := strings.Join(key[:len(key)-1], ".")
	best, bestD := "", len(last)/3+1
	for _, k := range knownKeys() {
		parts := strings.Split(k, ".")
		d := editDistance(last, parts[len(parts)-1])
		if strings.Join(parts[:len(parts)-1], ".") != table {
			d++
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance of a and b, by
// bytes: insertions, deletions, substitutions and swaps of two adjacent
// bytes (the commonest typo) count one edit each.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
