package plan

import (
	"slices"
	"strings"
	"testing"
)

// A goal's acceptance sections, right under its heading, are the root's
// criteria, as tree-import reads them, and leave the goal's text; other
// sections, and acceptance sections deeper down, stay in the text.
func TestGoalAcceptance(t *testing.T) {
	for _, c := range []struct {
		name, in, rest string
		want           []string
	}{
		{"none", "# Slugify\n\nWrite slugify.\n", "# Slugify\n\nWrite slugify.\n", nil},
		{"section", "# Slugify\n\nWrite slugify.\n\n## Acceptance\n\n- `slugify(\"A B\")` is `a-b`\n- the tests pass\n",
			"# Slugify\n\nWrite slugify.\n", []string{"`slugify(\"A B\")` is `a-b`", "the tests pass"}},
		{"section in the middle", "# G\n\nText.\n\n## Done when\n\n* one\n  * nested\n\n## Notes\n\nKeep it small.\n",
			"# G\n\nText.\n\n## Notes\n\nKeep it small.\n", []string{"one", "nested"}},
		{"its subsections too", "# G\n\nText.\n\n## Acceptance criteria\n\n### API\n\n- a\n\n### CLI\n\nb works\n\n## After\n\nx\n",
			"# G\n\nText.\n\n## After\n\nx\n", []string{"a", "b works"}},
		{"two sections", "# G\n\n## Acceptance\n\n- a\n\n## Success criteria\n\n1. b\n", "# G\n", []string{"a", "b"}},
		{"deeper down stays", "# G\n\n## Part\n\n### Acceptance\n\n- a\n", "# G\n\n## Part\n\n### Acceptance\n\n- a\n", nil},
		{"no heading", "Do it.\n\n## Acceptance\n\n- a\n", "Do it.\n", []string{"a"}},
		{"a fenced heading is code", "# G\n\n```\n## Acceptance\n- a\n```\n", "# G\n\n```\n## Acceptance\n- a\n```\n", nil},
		{"empty section", "# G\n\nText.\n\n## Acceptance\n", "# G\n\nText.\n", nil},
		{"crlf", "# G\r\n\r\nText.\r\n\r\n## Acceptance\r\n\r\n- a\r\n", "# G\n\nText.\n", []string{"a"}},
	} {
		rest, got, err := GoalAcceptance(c.in)
		if err != nil || rest != c.rest || !slices.Equal(got, c.want) {
			t.Errorf("%s: GoalAcceptance = %q, %q, %v; want %q, %q", c.name, rest, got, err, c.rest, c.want)
		}
	}
}

// The schema's bounds hold: more than 64 criteria, or one too long, is an
// error that says what to do.
func TestGoalAcceptanceBounds(t *testing.T) {
	many := "# G\n\n## Acceptance\n\n" + strings.Repeat("- c\n", 65)
	if _, _, err := GoalAcceptance(many); err == nil || !strings.Contains(err.Error(), "gives 65 criteria; a node holds at most 64") {
		t.Errorf("65 criteria: %v", err)
	}
	long := "# G\n\n## Acceptance\n\n- " + strings.Repeat("x", 4097) + "\n"
	if _, _, err := GoalAcceptance(long); err == nil || !strings.Contains(err.Error(), "longer than the 4096 characters") {
		t.Errorf("a long criterion: %v", err)
	}
	edge := "# G\n\n## Acceptance\n\n- " + strings.Repeat("é", 4096) + "\n"
	if _, got, err := GoalAcceptance(edge); err != nil || len(got) != 1 || got[0] != strings.Repeat("é", 4096) {
		t.Errorf("a criterion of 4096 characters: %d %v", len(got), err)
	}
	ok := "# G\n\n## Acceptance\n\n" + strings.Repeat("- c\n", 64)
	if _, got, err := GoalAcceptance(ok); err != nil || len(got) != 64 {
		t.Errorf("64 criteria: %d %v", len(got), err)
	}
}
