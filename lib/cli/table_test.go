package cli

import (
	"bytes"
	"testing"
)

func TestCut(t *testing.T) {
	if got := Cut("héllo world", 6); got != "héllo…" {
		t.Errorf("Cut: %q", got)
	}
	if got := Cut("short", 0); got != "short" {
		t.Errorf("Cut without a width: %q", got)
	}
}

// Each column is as wide as its widest cell, a long word included;
// numbers align right; the last column is not padded; lines are cut.
func TestTableAligns(t *testing.T) {
	tb := Table{Header: []string{"iter", "result", "cost", "summary"}, Right: map[int]bool{0: true, 2: true}, Indent: "  "}
	tb.Add("1", "runner-error", "$0.1000", "the agent could not start")
	tb.Add("12", "passed", "$12.0000", "")
	var b bytes.Buffer
	if err := tb.Write(&b, 0); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"  iter  result            cost  summary\n" +
		"     1  runner-error   $0.1000  the agent could not start\n" +
		"    12  passed        $12.0000\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	tb.Write(&b, 20)
	if first, _, _ := bytes.Cut(b.Bytes(), []byte("\n")); string(first) != "  iter  result     …" {
		t.Errorf("cut to 20: %q", first)
	}
}

// A line exactly width runes long is not cut.
func TestCutAtWidth(t *testing.T) {
	if got := Cut("héllo", 5); got != "héllo" {
		t.Errorf("Cut to its own width: %q", got)
	}
	if got := Cut("héllo", 4); got != "hél…" {
		t.Errorf("Cut one rune short: %q", got)
	}
}

// A row with fewer cells than the header has empty ones; cells beyond the
// header's columns are not shown.
func TestTableRaggedRows(t *testing.T) {
	tb := Table{Header: []string{"id", "status", "n"}, Right: map[int]bool{2: true}}
	tb.Add("a")
	tb.Add("b", "open", "10", "extra", "more")
	tb.Add()
	var b bytes.Buffer
	if err := tb.Write(&b, 0); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"id  status   n\n" +
		"a\n" +
		"b   open    10\n" +
		"\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
}
