package plan

import (
	"slices"
	"testing"
)

// titles are the titles of an item's children, in order.
func titles(it *Item) []string {
	var out []string
	for _, c := range it.Children {
		out = append(out, c.Title)
	}
	return out
}

// Stories are ordered by priority, lower first; stories of equal priority,
// and those without a numeric one (after the others), keep the file's
// order.
func TestPRDPriorityOrder(t *testing.T) {
	doc := `{"userStories": [
		{"title": "no priority"},
		{"title": "two", "priority": 2},
		{"title": "one", "priority": 1},
		{"title": "two again", "priority": 2},
		{"title": "a word", "priority": "high"},
		{"title": "one again", "priority": 1},
		{"title": "zero", "priority": 0}
	]}`
	p, err := Parse([]byte(doc), FormatAuto, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"zero", "one", "one again", "two", "two again", "no priority", "a word"}
	if got := titles(p.Root); !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// The root's title is the project's (or projectName, feature), else the
// caller's; its goal is the description and, when the plan names one, the
// branch. A story's goal is its description, then its notes and
// dependencies, each only when given.
func TestPRDGoals(t *testing.T) {
	for _, c := range []struct {
		name, doc, title, goal string
		story                  []string // the stories' goals
	}{
		{"bare", `{"description": "Do it.", "userStories": [{"title": "A", "description": "As a user.", "notes": "  "}]}`,
			"Plan", "Do it.", []string{"As a user."}},
		{"branch, notes, dependencies", `{"projectName": "App", "description": "Do it.", "branchName": "ralph/x", "userStories": [
			{"title": "A", "description": "As a user.", "notes": "Use a migration.", "dependencies": ["US-001", "US-002"]},
			{"title": "B", "dependencies": ["US-003"]},
			{"title": "C", "notes": "Small.", "dependencies": []}]}`,
			"App", "Do it.\n\nBranch named in the plan: ralph/x",
			[]string{"As a user.\n\nNotes: Use a migration.\n\nDepends on: US-001, US-002", "Depends on: US-003", "Notes: Small."}},
		{"a blank project", `{"project": " ", "feature": "Feature F", "userStories": [{"title": "A"}]}`,
			"Feature F", "", []string{""}},
	} {
		p, err := Parse([]byte(c.doc), FormatAuto, "")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if p.Format != FormatPRDJSON || p.Root.Title != c.title || p.Root.Goal != c.goal {
			t.Errorf("%s: %s root %q goal %q, want %q goal %q", c.name, p.Format, p.Root.Title, p.Root.Goal, c.title, c.goal)
		}
		var goals []string
		for _, s := range p.Root.Children {
			goals = append(goals, s.Goal)
		}
		if !slices.Equal(goals, c.story) {
			t.Errorf("%s: story goals %q, want %q", c.name, goals, c.story)
		}
	}
}

// A criterion wrapped whole in bold or underscores loses the wrapping;
// emphasis inside it, or markers alone, stay as written; an empty one is
// left out.
func TestPRDCriteriaEmphasis(t *testing.T) {
	doc := `{"userStories": [{"title": "A", "acceptanceCriteria":
		["**bold**", "__under__", "**a** and **b**", "**", "****", "___", "  ", "**x**  "]}]}`
	p, err := Parse([]byte(doc), FormatPRDJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bold", "under", "**a** and **b**", "**", "****", "___", "x"}
	if got := p.Root.Children[0].Acceptance; !slices.Equal(got, want) {
		t.Errorf("criteria %q, want %q", got, want)
	}
}

// An issue's body is read as Markdown under its title; line numbers are
// the body's own.
func TestIssueLines(t *testing.T) {
	doc := `{"title": "Fix it", "body": "Intro.\n<!-- hidden -->\n- [x] Done thing\n- [ ] Next\n"}`
	p, err := Parse([]byte(doc), FormatAuto, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Format != FormatGitHubIssue || p.Root.Title != "Fix it" || !slices.Equal(titles(p.Root), []string{"Done thing", "Next"}) {
		t.Errorf("%s root %q children %q", p.Format, p.Root.Title, titles(p.Root))
	}
	if len(p.Rejected) != 1 || p.Rejected[0].Line != 2 || p.Rejected[0].Text != "<!-- hidden -->" {
		t.Errorf("rejected %+v, want line 2", p.Rejected)
	}
	if len(p.Assumptions) != 1 || p.Assumptions[0].Line != 3 || p.Assumptions[0].Text != "Done thing" {
		t.Errorf("assumptions %+v, want line 3", p.Assumptions)
	}
	if c := p.Root.Children; c[0].Line != 3 || c[1].Line != 4 {
		t.Errorf("item lines %d %d, want 3 4", c[0].Line, c[1].Line)
	}
}

// lineAt is the 1-based line of a byte offset; the end of the data is on
// its last line, an offset outside it on line 1.
func TestLineAt(t *testing.T) {
	data := []byte("ab\ncd\nef")
	for i, want := range map[int]int{-1: 1, 0: 1, 2: 1, 3: 2, 6: 3, 8: 3, 9: 1} {
		if got := lineAt(data, i); got != want {
			t.Errorf("lineAt(%d) = %d, want %d", i, got, want)
		}
	}
}
