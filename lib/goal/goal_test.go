package goal

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Root takes the title from the first heading, the goal from the text
// under it and the acceptance from its Acceptance section, which the goal
// then leaves out; without one the acceptance is empty, not nil.
func TestRoot(t *testing.T) {
	for _, c := range []struct {
		name, in, title, goal string
		acceptance            []string
	}{
		{"plain", "# Count\n\nPrint how many words.\n", "Count", "Print how many words.", []string{}},
		{"heading alone", "# Count\n", "Count", "Count", []string{}},
		{"acceptance", "---\nid: r1\n---\n# Count\n\nPrint how many words.\n\n## Acceptance\n\n- `wc` agrees\n- tests pass\n\n## Notes\n\nNo flags.\n",
			"Count", "Print how many words.\n\n## Notes\n\nNo flags.", []string{"`wc` agrees", "tests pass"}},
		{"acceptance alone", "# Count\n\n## Done when\n\n- tests pass\n", "Count", "Count", []string{"tests pass"}},
	} {
		d, err := Parse([]byte(c.in))
		if err != nil {
			t.Fatal(err)
		}
		title, goal, acc, err := d.Root()
		if err != nil || title != c.title || goal != c.goal || acc == nil || !slices.Equal(acc, c.acceptance) {
			t.Errorf("%s: Root = %q, %q, %q, %v; want %q, %q, %q", c.name, title, goal, acc, err, c.title, c.goal, c.acceptance)
		}
	}
	d, _ := Parse([]byte(Template))
	if _, _, _, err := d.Root(); !errors.Is(err, ErrTemplate) {
		t.Errorf("the template: %v", err)
	}
	d, _ = Parse([]byte("# G\n\n## Acceptance\n\n" + strings.Repeat("- c\n", 65)))
	if _, _, _, err := d.Root(); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("65 criteria: %v", err)
	}
}
