package jsondoc

import (
	"strings"
	"testing"
)

func TestMarshal(t *testing.T) {
	got, err := Marshal(map[string]any{"a": []int{1}, "h": "<&>"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"a\": [\n    1\n  ],\n  \"h\": \"<&>\"\n}\n"; string(got) != want {
		t.Errorf("Marshal = %q, want %q", got, want)
	}
	var b strings.Builder
	if err := Write(&b, []string{}); err != nil || b.String() != "[]\n" {
		t.Errorf("Write = %q, %v", b.String(), err)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Error("Marshal of a func: no error")
	}
}

// Both forms escape alike: HTML characters as themselves, control
// characters escaped, U+2028/U+2029 escaped, invalid UTF-8 replaced.
func TestEscaping(t *testing.T) {
	in := "<a href=\"x\">&amp;</a>\x00\x01\b\f\n\r\t\x1f\x7f\u2028\u2029\xff é"
	want := `"<a href=\"x\">&amp;</a>\u0000\u0001\b\f\n\r\t\u001f` + "\x7f" + `\u2028\u2029\ufffd é"`
	doc, err := Marshal(in)
	if err != nil || string(doc) != want+"\n" {
		t.Errorf("Marshal = %q, %v; want %q", doc, err, want+"\n")
	}
	line, err := Compact(map[string]string{"s": in})
	if err != nil || string(line) != `{"s":`+want+`}` {
		t.Errorf("Compact = %q, %v; want %q", line, err, `{"s":`+want+`}`)
	}
}

func TestCompactIsOneLine(t *testing.T) {
	got, err := Compact(struct {
		A []int           `json:"a"`
		M map[string]bool `json:"m"`
	}{[]int{1, 2}, map[string]bool{"z": true, "a": false}})
	if err != nil || string(got) != `{"a":[1,2],"m":{"a":false,"z":true}}` {
		t.Errorf("Compact = %q, %v", got, err)
	}
}
