package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

// max_attempts is 1 to tree.MaxAttemptsLimit, both ends included; the
// root and every node get it.
func TestTreeMaxAttempts(t *testing.T) {
	for _, c := range []struct {
		max int
		ok  bool
	}{{0, false}, {1, true}, {tree.MaxAttemptsLimit, true}, {tree.MaxAttemptsLimit + 1, false}} {
		p, err := Parse([]byte("- [ ] a\n- [ ] b\n"), FormatMarkdown, "")
		if err != nil {
			t.Fatal(err)
		}
		root, err := p.Tree("root", c.max)
		if (err == nil) != c.ok {
			t.Errorf("max_attempts %d: err %v, want ok=%v", c.max, err, c.ok)
			continue
		}
		if c.ok && (root.MaxAttempts != c.max || root.Children[1].MaxAttempts != c.max) {
			t.Errorf("max_attempts %d: root %d, child %d", c.max, root.MaxAttempts, root.Children[1].MaxAttempts)
		}
	}
}

// Children are ordered 1..n in the plan's order; the root's order is 0.
func TestTreeOrder(t *testing.T) {
	_, root, err := Import([]byte("- [ ] a\n- [ ] b\n  - [ ] b1\n  - [ ] b2\n- [ ] c\n"), FormatMarkdown, "", "root", 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	got = append(got, root.Order)
	for _, c := range root.Children {
		got = append(got, c.Order)
	}
	for _, c := range root.Children[1].Children {
		got = append(got, c.Order)
	}
	if want := []int64{0, 1, 2, 3, 1, 2}; !slices.Equal(got, want) {
		t.Errorf("orders %v, want %v", got, want)
	}
}

// Tree lists the assumptions and the rejected lines in line order,
// whatever order the plan gave them in.
func TestTreeSortsNotes(t *testing.T) {
	p := Plan{
		Root:        &Item{Title: "R", Line: 1},
		Assumptions: []Note{{Line: 5, Text: "e"}, {Line: 2, Text: "b"}, {Line: 3, Text: "c"}},
		Rejected:    []Note{{Line: 9, Text: "i"}, {Line: 3, Text: "c"}},
	}
	if _, err := p.Tree("root", 3); err != nil {
		t.Fatal(err)
	}
	lines := func(ns []Note) (out []int) {
		for _, n := range ns {
			out = append(out, n.Line)
		}
		return out
	}
	if got := lines(p.Assumptions); !slices.Equal(got, []int{2, 3, 5}) {
		t.Errorf("assumptions in lines %v", got)
	}
	if got := lines(p.Rejected); !slices.Equal(got, []int{3, 9}) {
		t.Errorf("rejected in lines %v", got)
	}
}

// Text at the schema's bounds is kept whole; one character more is cut
// (a title's whole text then moves to the goal) and the cut reported. A
// section's prose of 150 words is a step, of 151 words decomposed. The
// bounds count characters, not bytes ("é" is two bytes).
func TestNodeBoundsAtLimit(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("word ", n)) }
	for _, c := range []struct {
		name        string
		it          Item
		title, goal string
		acc         []string
		next        string
		rejected    int
	}{
		{"title at 256", Item{Title: strings.Repeat("é", 256)}, strings.Repeat("é", 256), "", []string{}, tree.NextExecute, 0},
		{"title at 257", Item{Title: strings.Repeat("é", 257)}, strings.Repeat("é", 255) + "…", strings.Repeat("é", 257), []string{}, tree.NextExecute, 0},
		{"goal at 16384", Item{Title: "T", Goal: strings.Repeat("é", 16384)}, "T", strings.Repeat("é", 16384), []string{}, tree.NextExecute, 0},
		{"goal at 16385", Item{Title: "T", Goal: strings.Repeat("é", 16385)}, "T", strings.Repeat("é", 16384), []string{}, tree.NextExecute, 1},
		{"criterion at 4096", Item{Title: "T", Acceptance: []string{strings.Repeat("é", 4096)}}, "T", "", []string{strings.Repeat("é", 4096)}, tree.NextExecute, 0},
		{"criterion at 4097", Item{Title: "T", Acceptance: []string{strings.Repeat("é", 4097)}}, "T", "", []string{strings.Repeat("é", 4096)}, tree.NextExecute, 1},
		{"section of 150 words", Item{Title: "T", Goal: words(150), Section: true}, "T", words(150), []string{}, tree.NextExecute, 0},
		{"section of 151 words", Item{Title: "T", Goal: words(151), Section: true}, "T", words(151), []string{}, tree.NextDecompose, 0},
		{"list item of 151 words", Item{Title: "T", Goal: words(151)}, "T", words(151), []string{}, tree.NextExecute, 0},
		{"section of 151 words with a criterion", Item{Title: "T", Goal: words(151), Section: true, Acceptance: []string{"a"}}, "T", words(151), []string{"a"}, tree.NextExecute, 0},
	} {
		it := c.it
		it.Line = 1
		p := Plan{Root: &it}
		root, err := p.Tree("root", 3)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if root.Title != c.title || root.Goal != c.goal || !slices.Equal(root.Acceptance, c.acc) || root.Next != c.next {
			t.Errorf("%s: title %d runes, goal %d runes, criteria %d, next %s", c.name, len([]rune(root.Title)), len([]rune(root.Goal)), len(root.Acceptance), root.Next)
		}
		if len(p.Rejected) != c.rejected {
			t.Errorf("%s: rejected %v, want %d", c.name, p.Rejected, c.rejected)
		}
	}
}

// The outline shows a goal's first line, cut to 100 characters.
func TestOutlineGoalLine(t *testing.T) {
	for _, c := range []struct{ goal, want string }{
		{strings.Repeat("é", 100) + "\nsecond line", strings.Repeat("é", 100)},
		{strings.Repeat("é", 101), strings.Repeat("é", 99) + "…"},
	} {
		p := Plan{Root: &Item{Title: "R", Goal: c.goal, Acceptance: []string{"it works"}, Line: 1}}
		root, err := p.Tree("root", 3)
		if err != nil {
			t.Fatal(err)
		}
		want := "root  execute  R\n    goal: " + c.want + "\n    acceptance: it works\n"
		if got := p.Outline(root); got != want {
			t.Errorf("outline:\n%s\nwant\n%s", got, want)
		}
	}
}

// The assumptions as Markdown for assumptions.md: nothing when none, else
// a section naming the source with one line per checked item.
func TestAssumptionsMarkdown(t *testing.T) {
	p, err := Parse([]byte("- [ ] a\n- [x] b\n- [X] c\n"), FormatMarkdown, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "\n## Checked in the plan (plan.md)\n\nThe plan marks these done; their nodes are open until the guard passes them.\n\n- b (line 2)\n- c (line 3)\n"
	if got := p.AssumptionsMarkdown("plan.md"); got != want {
		t.Errorf("AssumptionsMarkdown:\n%q\nwant\n%q", got, want)
	}
	none, err := Parse([]byte("- [ ] a\n"), FormatMarkdown, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := none.AssumptionsMarkdown("plan.md"); got != "" {
		t.Errorf("no assumptions: %q", got)
	}
}
