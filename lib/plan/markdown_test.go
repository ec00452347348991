package plan

import (
	"slices"
	"strings"
	"testing"
)

// parseMD parses a Markdown plan or fails the test.
func parseMD(t *testing.T, doc, title string) Plan {
	t.Helper()
	p, err := Parse([]byte(doc), FormatMarkdown, title)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The caller's title names a root the plan lacks; "" means "Plan".
func TestParseTitle(t *testing.T) {
	for title, want := range map[string]string{"": "Plan", "Ship it": "Ship it"} {
		if p := parseMD(t, "- [ ] a\n- [ ] b\n", title); p.Root.Title != want {
			t.Errorf("title %q: root %q, want %q", title, p.Root.Title, want)
		}
	}
}

// A rejected line is reported on one line of at most 200 bytes, then "…".
func TestRejectedTextLength(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"<!--" + strings.Repeat("x", 193) + "-->", "<!--" + strings.Repeat("x", 193) + "-->"},
		{"<!--" + strings.Repeat("x", 194) + "-->", "<!--" + strings.Repeat("x", 194) + "--…"},
		{"<!-- a   b -->", "<!-- a b -->"},
	} {
		p := parseMD(t, "# R\n"+c.line+"\n", "")
		if len(p.Rejected) != 1 || p.Rejected[0].Text != c.want || p.Rejected[0].Line != 2 {
			t.Errorf("rejected %+v, want line 2 %q", p.Rejected, c.want)
		}
	}
}

// A front matter block is rejected line by line; without its closing
// line, the "---" is a thematic break and the rest is the plan.
func TestFrontMatter(t *testing.T) {
	p := parseMD(t, "---\ntitle: x\n\nauthor: y\n---\n# H\n\n- [ ] a\n", "")
	var lines []int
	for _, r := range p.Rejected {
		if r.Reason != "front matter: metadata, not work" {
			t.Errorf("rejected %+v", r)
		}
		lines = append(lines, r.Line)
	}
	if !slices.Equal(lines, []int{2, 4}) || p.Root.Title != "H" || !slices.Equal(titles(p.Root), []string{"a"}) {
		t.Errorf("front matter: rejected lines %v, root %q, children %q", lines, p.Root.Title, titles(p.Root))
	}
	open := parseMD(t, "---\n# H\n\n- [ ] a\n", "")
	if len(open.Rejected) != 0 || open.Root.Title != "H" || !slices.Equal(titles(open.Root), []string{"a"}) {
		t.Errorf("unclosed: rejected %v, root %q, children %q", open.Rejected, open.Root.Title, titles(open.Root))
	}
}

// A numbered item is a task, from "0." to "9)"; with tasks in the plan, a
// plain bullet beside them is the section's text.
func TestNumberedItems(t *testing.T) {
	p := parseMD(t, "# R\n\nIntro.\n\n- a note\n0. zero\n9) nine\n", "")
	if got := titles(p.Root); !slices.Equal(got, []string{"zero", "nine"}) {
		t.Errorf("children %q", got)
	}
	if p.Root.Goal != "Intro.\n\n- a note" {
		t.Errorf("goal %q", p.Root.Goal)
	}
}

// A tab indents four columns: an item under a tab nests.
func TestTabIndent(t *testing.T) {
	p := parseMD(t, "- [ ] a\n\t- [ ] b\n\t\t- [ ] c\n", "")
	if p.Root.Title != "a" || !slices.Equal(titles(p.Root), []string{"b"}) || !slices.Equal(titles(p.Root.Children[0]), []string{"c"}) {
		t.Errorf("root %q children %q", p.Root.Title, titles(p.Root))
	}
}

// A label line at an item's text column gives that item's criteria: its
// own text, or the list after it; at the margin, the section's.
func TestLabelUnderItem(t *testing.T) {
	p := parseMD(t, "# R\n\n- [ ] one\n  Acceptance: it works\n- [ ] two\n  Done when:\n  - a\n    - b\n- [ ] three\nSuccess criteria: all green\n", "")
	want := [][]string{{"it works"}, {"a", "b"}, nil}
	for i, c := range p.Root.Children {
		if !slices.Equal(c.Acceptance, want[i]) {
			t.Errorf("%s: criteria %q, want %q", c.Title, c.Acceptance, want[i])
		}
	}
	if !slices.Equal(p.Root.Acceptance, []string{"all green"}) {
		t.Errorf("root criteria %q", p.Root.Acceptance)
	}
}

// Lines at an item's text column continue it: its goal, their shared
// indentation removed; a fenced block in it is kept line by line, blank
// lines and code at the margin too. Under a plain bullet they continue
// the criterion.
func TestContinuation(t *testing.T) {
	doc := "- [ ] one\n  first line\n    indented more\n- [ ] two\n  ```\n  x := 1\n\n  y := 2\n  ```\n" +
		"- [ ] three\n  ```\nfunc f() {}\n  ```\n- [ ] four\n  - criterion\n    continued here\n"
	p := parseMD(t, doc, "")
	c := p.Root.Children
	if len(c) != 4 {
		t.Fatalf("children %q", titles(p.Root))
	}
	if c[0].Goal != "first line\n  indented more" {
		t.Errorf("one: goal %q", c[0].Goal)
	}
	if c[1].Goal != "```\nx := 1\n\ny := 2\n```" {
		t.Errorf("two: goal %q", c[1].Goal)
	}
	if !strings.Contains(c[2].Goal, "\nfunc f() {}\n") {
		t.Errorf("three: goal %q", c[2].Goal)
	}
	if !slices.Equal(c[3].Acceptance, []string{"criterion continued here"}) || c[3].Goal != "" {
		t.Errorf("four: criteria %q goal %q", c[3].Acceptance, c[3].Goal)
	}
	if len(p.Rejected) != 0 {
		t.Errorf("rejected %v", p.Rejected)
	}
}

// With tasks in the plan, a section without any is context: its text,
// criteria, list (nested entries indented) and subsections, as Markdown
// in the root's goal.
func TestContext(t *testing.T) {
	doc := "# R\n\n## Work\n\n- [ ] do it\n\n## Notes\n\nAcceptance: noted\n\n- one\n  more of one\n- two\n  - nested\n\n### Deeper\n\nSome text.\n"
	p := parseMD(t, doc, "")
	want := "## Notes\n\nnoted\n\n- one more of one\n- two\n  - nested\n\n### Deeper\n\nSome text."
	if p.Root.Goal != want {
		t.Errorf("goal:\n%s\nwant\n%s", p.Root.Goal, want)
	}
	if got := titles(p.Root); !slices.Equal(got, []string{"Work"}) {
		t.Errorf("children %q", got)
	}
}
