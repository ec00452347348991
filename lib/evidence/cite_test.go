package evidence

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
)

// A weaker pass never reads as a witnessed one: each level, and a pass
// with no tests by name, has words of its own, and only the witnessed
// one says "witnessed".
func TestSaidNeverReadsAsWitnessed(t *testing.T) {
	seen := map[string]string{}
	for _, c := range []*iterdir.Cited{
		nil,
		{Level: tree.EvidenceWitness},
		{Level: tree.EvidenceSuite},
		{Level: tree.EvidenceProposedSuite},
		{Level: ""},
	} {
		level := "nil"
		if c != nil {
			level = fmt.Sprintf("%q", c.Level)
		}
		s := Said(c)
		if other, ok := seen[s]; ok {
			t.Errorf("levels %s and %s both read %q", other, level, s)
		}
		seen[s] = level
		if (c != nil && c.Level == tree.EvidenceWitness) != strings.Contains(s, "witness") {
			t.Errorf("level %s reads %q", level, s)
		}
	}
	if Said(nil) != NoTestsByName || Said(&iterdir.Cited{Level: tree.EvidenceSuite}) != Describe(tree.EvidenceSuite) {
		t.Error("Said does not use Describe's words")
	}
}

func TestLine(t *testing.T) {
	w := &iterdir.Cited{Level: tree.EvidenceWitness, Held: true, Passed: 12, Skipped: 1, PassToPass: 10, PassedAgain: 10, Witnesses: []string{"tests.test_a::test_x", "tests.test_a::test_y"}}
	if got, want := Line(w), "witnessed by tests.test_a::test_x, tests.test_a::test_y; 12 passed, 0 failed, 1 skipped; 10 of 10 that passed before passed again"; got != want {
		t.Errorf("witnessed:\n%s\nwant\n%s", got, want)
	}
	s := &iterdir.Cited{Level: tree.EvidenceProposedSuite, Held: true, Passed: 4, Errors: 2, PassToPass: 4, PassedAgain: 3, Witnesses: []string{}}
	if got, want := Line(s), "suite only (proposed by the agent); 4 passed, 0 failed, 2 in error, 0 skipped; 3 of 4 that passed before passed again"; got != want {
		t.Errorf("proposed suite:\n%s\nwant\n%s", got, want)
	}
	// A suite pass names no witness, even if the record had one.
	s.Witnesses = []string{"t"}
	if Stands(s) != Said(s) {
		t.Errorf("a suite pass cites a witness: %s", Stands(s))
	}
	if Line(nil) != NoTestsByName || Counts(nil) != "" {
		t.Errorf("no tests by name: %q %q", Line(nil), Counts(nil))
	}
	more := &iterdir.Cited{Level: tree.EvidenceWitness, Witnesses: []string{"a"}, Unlisted: 3}
	if got := Stands(more); got != "witnessed by a and 3 more" {
		t.Errorf("unlisted witnesses: %q", got)
	}
}

func TestOfRow(t *testing.T) {
	for _, c := range []struct {
		row  iterdir.Row
		want string
	}{
		{iterdir.Row{Result: "passed", Evidence: &iterdir.Cited{Level: tree.EvidenceWitness, Held: true}}, "witnessed"},
		{iterdir.Row{Result: "passed", Evidence: &iterdir.Cited{Level: tree.EvidenceSuite, Held: true}}, "suite only (the operator's choice)"},
		{iterdir.Row{Result: "passed"}, NoTestsByName},
		// A failed guard's counts are no pass's evidence.
		{iterdir.Row{Result: "failed", Evidence: &iterdir.Cited{Level: tree.EvidenceWitness}}, "-"},
	} {
		if got := OfRow(c.row); got != c.want {
			t.Errorf("%+v: %q, want %q", c.row, got, c.want)
		}
	}
}

// What the trailers keep reads back as the evidence they were written
// from, with the witnesses beyond the trailers' bound counted.
func TestTrailersRoundTrip(t *testing.T) {
	tests := make([]string, MaxWitnessTrailers+3)
	for i := range tests {
		tests[i] = fmt.Sprintf("pkg.TestW%d", i)
	}
	tests[0] = "tests/a.test.ts > adds\tnumbers"
	ev := iterdir.Evidence{Level: tree.EvidenceWitness, Held: true, Passed: 30, Skipped: 2, PassToPass: 7, Missing: nil,
		Witness: &iterdir.Witness{Tests: tests}}
	lines := Trailers(ev)
	if lines[0] != "Treeloop-Evidence: witness; 30 passed, 2 skipped, 7 of 7 passed before" {
		t.Errorf("evidence trailer: %q", lines[0])
	}
	if lines[1] != "Treeloop-Witness: tests/a.test.ts > adds numbers" || lines[len(lines)-1] != "Treeloop-Witness: and 3 more" {
		t.Errorf("witness trailers: %q", lines)
	}
	got := ParseTrailers(append([]string{"Treeloop-Model: m"}, lines...))
	want := &iterdir.Cited{Level: tree.EvidenceWitness, Held: true, Passed: 30, Skipped: 2, PassToPass: 7, PassedAgain: 7,
		Witnesses: append([]string{"tests/a.test.ts > adds numbers"}, tests[1:MaxWitnessTrailers]...), Unlisted: 3}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed:\n%+v\nwant\n%+v", got, want)
	}
	// No skipped: the trailer says nothing of them; a level "" is suite.
	lines = Trailers(iterdir.Evidence{Held: true, Passed: 2, PassToPass: 2})
	if lines[0] != "Treeloop-Evidence: suite; 2 passed, 2 of 2 passed before" || len(lines) != 1 {
		t.Errorf("suite trailers: %q", lines)
	}
	// Tests of the best that did not pass again are not counted as passed
	// again; a control character in a witness's name is a space.
	missing := Trailers(iterdir.Evidence{Level: tree.EvidenceWitness, Held: true, Passed: 5, PassToPass: 4, Missing: []string{"a", "b"},
		Witness: &iterdir.Witness{Tests: []string{"t\x1fx\x7fy"}}})
	if missing[0] != "Treeloop-Evidence: witness; 5 passed, 2 of 4 passed before" || missing[1] != "Treeloop-Witness: t x y" {
		t.Errorf("trailers with tests missing: %q", missing)
	}
	if c := ParseTrailers(lines); c == nil || c.Level != tree.EvidenceSuite || c.Skipped != 0 || c.Passed != 2 || len(c.Witnesses) != 0 {
		t.Errorf("suite parsed: %+v", c)
	}
	for _, bad := range [][]string{nil, {"Treeloop-Model: x"}, {"Treeloop-Evidence: witness; many passed"}, {"Treeloop-Witness: t"}} {
		if c := ParseTrailers(bad); c != nil {
			t.Errorf("%q parsed as %+v", bad, c)
		}
	}
}
