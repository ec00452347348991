package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
)

// result is a command's JSON result as the tests print it.
type result struct {
	ID     string   `json:"id"`
	Cost   float64  `json:"cost_usd"`
	Recent []string `json:"recent"`
}

var sample = result{ID: "n1", Cost: 0.5, Recent: []string{"a", "b"}}

const sampleJSON = "{\n  \"id\": \"n1\",\n  \"cost_usd\": 0.5,\n  \"recent\": [\n    \"a\",\n    \"b\"\n  ]\n}\n"

// failing is a stdout that cannot be written.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// Without --get the whole result is printed as every --json output is;
// with it the value at the path, a string bare and anything else as JSON,
// and a path that matches nothing is exit 1 with nothing printed.
func TestGetPrintJSON(t *testing.T) {
	for _, c := range []struct {
		get, out string
		code     int
	}{
		{"", sampleJSON, 0},
		{"id", "n1\n", 0},
		{"cost_usd", "0.5\n", 0},
		{"recent", "[\n    \"a\",\n    \"b\"\n  ]\n", 0}, // as in the document
		{"recent.#", "2\n", 0},
		{"recent.1", "b\n", 0},
		{"nope", "", exit.Negative},
	} {
		var out bytes.Buffer
		g := Get{Get: c.get}
		err := g.PrintJSON(&Env{Stdout: &out}, sample)
		if exit.Code(err) != c.code || out.String() != c.out {
			t.Errorf("--get %q: %v (exit %d), printed %q; want exit %d, %q", c.get, err, exit.Code(err), out.String(), c.code, c.out)
		}
		if g.Wanted() != (c.get != "") {
			t.Errorf("--get %q: Wanted() = %v", c.get, g.Wanted())
		}
		out.Reset()
		err = g.PrintJSONBytes(&Env{Stdout: &out}, []byte(sampleJSON))
		if exit.Code(err) != c.code || out.String() != c.out {
			t.Errorf("--get %q of bytes: %v, printed %q; want exit %d, %q", c.get, err, out.String(), c.code, c.out)
		}
	}
	if err := (Get{Get: "nope"}).PrintJSON(&Env{Stdout: &bytes.Buffer{}}, sample); err == nil || err.Error() != "--get nope: no value at this path" {
		t.Errorf("a path that matches nothing: %v", err)
	}
}

// PrintJSONIfAny prints as PrintJSON does, but a --get path that matches
// nothing prints nothing and is no error.
func TestGetPrintJSONIfAny(t *testing.T) {
	for _, c := range []struct{ get, out string }{{"", sampleJSON}, {"id", "n1\n"}, {"nope", ""}} {
		var out bytes.Buffer
		if err := (Get{Get: c.get}).PrintJSONIfAny(&Env{Stdout: &out}, sample); err != nil || out.String() != c.out {
			t.Errorf("--get %q: %v, printed %q; want %q", c.get, err, out.String(), c.out)
		}
	}
}

// A result that is not JSON, or a stdout that cannot be written, is a
// runner error.
func TestGetPrintJSONErrors(t *testing.T) {
	notJSON := map[string]any{"f": func() {}}
	for _, g := range []Get{{}, {Get: "id"}} {
		var out bytes.Buffer
		if err := g.PrintJSON(&Env{Stdout: &out}, notJSON); exit.Code(err) != exit.RunnerError || out.Len() != 0 {
			t.Errorf("--get %q of a func: %v, printed %q", g.Get, err, out.String())
		}
		if err := g.PrintJSONIfAny(&Env{Stdout: &out}, notJSON); exit.Code(err) != exit.RunnerError || out.Len() != 0 {
			t.Errorf("--get %q of a func, if any: %v, printed %q", g.Get, err, out.String())
		}
	}
	err := Get{}.PrintJSON(&Env{Stdout: failing{}}, sample)
	if exit.Code(err) != exit.RunnerError || err == nil || !strings.HasPrefix(err.Error(), "write stdout: ") {
		t.Errorf("a broken stdout: %v", err)
	}
}

// ShellQuote's output, evaluated by a shell, is the string again.
func TestShellQuote(t *testing.T) {
	for s, want := range map[string]string{
		"":          "''",
		"plain":     "'plain'",
		"it's":      `'it'\''s'`,
		"a b\n$x''": `'a b` + "\n" + `$x'\'''\'''`,
	} {
		if got := ShellQuote(s); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", s, got, want)
		}
	}
}
