package tomlkey

import (
	"fmt"
	"strings"
	"testing"
)

const doc = `top = 1
[case]
id = "x"
agent = { backend = "command", "odd key" = 2 }

[[checks]]
type = "file_exists"

[[checks]]
type = "json_path"
a.b = 3

[other]
list = [{ k = 1 }]
`

// TestOf: every header and key is found at the line and column of its
// first part, inline tables and dotted keys with their whole path, keys
// of an array table with the element they belong to.
func TestOf(t *testing.T) {
	var got []string
	for _, p := range Of([]byte(doc)) {
		got = append(got, fmt.Sprintf("%s %d:%d %d", Join(p.Key), p.Line, p.Col, p.N))
	}
	want := []string{
		"top 1:1 -1",
		"case 2:2 -1",
		"case.id 3:1 -1",
		"case.agent 4:1 -1",
		"case.agent.backend 4:11 -1",
		`case.agent."odd key" 4:32 -1`,
		"checks 6:3 0",
		"checks.type 7:1 0",
		"checks 9:3 1",
		"checks.type 10:1 1",
		"checks.a.b 11:1 1",
		"other 13:2 -1",
		"other.list 14:1 -1",
		"other.list.k 14:11 -1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("index:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLookups(t *testing.T) {
	idx := Of([]byte(doc))
	if p, ok := idx.Find([]string{"checks", "type"}, 1); !ok || p.Line != 10 {
		t.Errorf("Find checks[1].type = %+v, %v", p, ok)
	}
	if p, ok := idx.Find([]string{"checks", "type"}, -1); !ok || p.Line != 7 {
		t.Errorf("Find any checks.type = %+v, %v", p, ok)
	}
	if _, ok := idx.Find([]string{"checks", "a", "b"}, 0); ok {
		t.Error("Find found a key of element 1 in element 0")
	}
	if p, ok := idx.At(4, 11); !ok || Join(p.Key) != "case.agent.backend" {
		t.Errorf("At(4, 11) = %+v, %v", p, ok)
	}
	if l, ok := idx.Line("checks.type", 10); !ok || l != 10 {
		t.Errorf("Line near 10 = %d, %v", l, ok)
	}
	if l, ok := idx.Line("checks.type", 99); !ok || l != 7 {
		t.Errorf("Line far = %d, %v", l, ok)
	}
	if _, ok := idx.Line("nope", 1); ok {
		t.Error("Line found an absent key")
	}
	// A document that stops parsing is indexed up to there.
	if got := Of([]byte("a = 1\nb = \n")); len(got) != 1 || Join(got[0].Key) != "a" {
		t.Errorf("broken document: %+v", got)
	}
}

// TestOwner: a value's position leads to its own key, inside an inline
// table too, and on a later line than the key.
func TestOwner(t *testing.T) {
	idx := Of([]byte("[b]\nx = {bin = 1, args = [\n  2,\n]}\ny = 3\n"))
	for _, tt := range []struct {
		key       []string
		line, col int
		want      string
	}{
		{[]string{"b", "x"}, 2, 12, "b.x.bin"},
		{[]string{"b", "x"}, 3, 3, "b.x.args"},
		{[]string{"b", "y"}, 5, 5, "b.y"},
	} {
		if p, ok := idx.Owner(tt.key, tt.line, tt.col); !ok || Join(p.Key) != tt.want {
			t.Errorf("Owner(%v, %d:%d) = %+v, %v; want %s", tt.key, tt.line, tt.col, p, ok, tt.want)
		}
	}
	if _, ok := idx.Owner([]string{"b", "z"}, 5, 5); ok {
		t.Error("Owner found an absent key")
	}
}
