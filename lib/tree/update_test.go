package tree_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/treeloop/treeloop/lib/tree"
)

// txTree: root{ a{ a1(passed), a2(attempts 1) }, b(max 2), c(passed) }.
func txTree() *tree.Node {
	return nd("root", 0,
		nd("a", 1, passed(nd("a1", 1)), with(nd("a2", 2), func(n *tree.Node) { n.Attempts = 1 })),
		with(nd("b", 2), func(n *tree.Node) { n.MaxAttempts = 2 }),
		passed(nd("c", 3)),
	)
}

func TestTransition(t *testing.T) {
	done := func(g string) tree.Outcome { return tree.Outcome{Status: tree.AgentDone, Guard: g} }
	tests := []struct {
		name     string
		start    func() *tree.Node
		selected string
		outcome  tree.Outcome
		want     func() *tree.Node
	}{
		{"done+pass passes the leaf and derives its parent", txTree, "a2", done(tree.GuardPass), func() *tree.Node {
			n := txTree()
			a := n.Children[0]
			a.Passes, a.Children[1].Passes = true, true
			return n
		}},
		{"done+pass on the last open leaf passes up to the root", func() *tree.Node {
			n := txTree()
			n.Children[0].Children[1].Passes = true
			n.Children[0].Passes = true
			return n
		}, "b", done(tree.GuardPass), func() *tree.Node {
			n := txTree()
			n.Passes = true
			for _, c := range []*tree.Node{n.Children[0], n.Children[0].Children[1], n.Children[1]} {
				c.Passes = true
			}
			return n
		}},
		{"done+pass keeps attempts", txTree, "a2", done(tree.GuardPass), func() *tree.Node {
			n := txTree()
			n.Children[0].Passes, n.Children[0].Children[1].Passes = true, true
			return n
		}},
		{"done+pass on a single-node tree", func() *tree.Node { return nd("root", 0) }, "root", done(tree.GuardPass),
			func() *tree.Node { return passed(nd("root", 0)) }},
		{"done+fail consumes an attempt", txTree, "a2", done(tree.GuardFail), func() *tree.Node {
			n := txTree()
			n.Children[0].Children[1].Attempts = 2
			return n
		}},
		{"retry+skipped consumes an attempt", txTree, "b", tree.Outcome{Status: tree.AgentRetry, Guard: tree.GuardSkipped}, func() *tree.Node {
			n := txTree()
			n.Children[1].Attempts = 1
			return n
		}},
		{"done+fail saturates at max_attempts", func() *tree.Node {
			n := txTree()
			n.Children[1].Attempts = 2
			return n
		}, "b", done(tree.GuardFail), func() *tree.Node {
			n := txTree()
			n.Children[1].Attempts = 2
			return n
		}},
		{"retry saturates at max_attempts", func() *tree.Node {
			n := txTree()
			n.Children[1].Attempts = 2
			return n
		}, "b", tree.Outcome{Status: tree.AgentRetry, Guard: tree.GuardSkipped}, func() *tree.Node {
			n := txTree()
			n.Children[1].Attempts = 2
			return n
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.start()
			if err := tree.Transition(got, tt.selected, tt.outcome, 3); err != nil {
				t.Fatalf("Transition: %v", err)
			}
			if want := tt.want(); !tree.Equal(got, want) {
				t.Errorf("Transition =\n%s\nwant\n%s", tree.Encode(got), tree.Encode(want))
			}
			if _, ps := tree.Load(tree.Encode(got)); len(ps) > 0 {
				t.Errorf("result invalid: %v", ps)
			}
		})
	}
}

func TestTransitionAttemptsSequence(t *testing.T) {
	n := txTree()
	var got []int
	for range 4 {
		if err := tree.Transition(n, "b", tree.Outcome{Status: tree.AgentDone, Guard: tree.GuardFail}, 3); err != nil {
			t.Fatal(err)
		}
		got = append(got, find(t, n, "b").Attempts)
	}
	if !slices.Equal(got, []int{1, 2, 2, 2}) {
		t.Errorf("attempts after each failure = %v, want [1 2 2 2]", got)
	}
	if s := tree.Select(n).String(); s != "status=open id=a2 path=root/a/a2 next=execute attempts=1/3" {
		// a2 is still the leftmost open leaf; b being stuck does not matter yet.
		t.Errorf("Select = %q", s)
	}
}

func TestTransitionDecomposed(t *testing.T) {
	n := txTree()
	kids := []tree.NewChild{
		{Title: "First", Goal: "g1", Acceptance: []string{"x", "y"}, Next: tree.NextExecute},
		{Title: "Second", Goal: "", Acceptance: nil, Next: tree.NextDecompose},
		{Title: "Third", Goal: "g3", Acceptance: []string{}, Next: ""}, // empty next defaults to execute
	}
	if err := tree.Transition(n, "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: kids}, 5); err != nil {
		t.Fatalf("Transition: %v", err)
	}
	want := txTree()
	want.Children[1].Children = []*tree.Node{
		{ID: "b.1", Order: 1, Title: "First", Goal: "g1", Acceptance: []string{"x", "y"}, Next: tree.NextExecute, MaxAttempts: 5, Children: []*tree.Node{}},
		{ID: "b.2", Order: 2, Title: "Second", Goal: "", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 5, Children: []*tree.Node{}},
		{ID: "b.3", Order: 3, Title: "Third", Goal: "g3", Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 5, Children: []*tree.Node{}},
	}
	if !tree.Equal(n, want) {
		t.Fatalf("Transition =\n%s\nwant\n%s", tree.Encode(n), tree.Encode(want))
	}
	// The parent keeps its own counters; the children do not alias the input.
	if b := find(t, n, "b"); b.Attempts != 0 || b.MaxAttempts != 2 || b.Passes {
		t.Errorf("parent changed: %+v", b)
	}
	kids[0].Acceptance[0] = "mutated"
	if find(t, n, "b.1").Acceptance[0] != "x" {
		t.Errorf("child acceptance aliases the outcome's slice")
	}
	mustLoad(t, tree.Encode(n))
	if s := tree.Select(n).String(); s != "status=open id=a2 path=root/a/a2 next=execute attempts=1/3" {
		t.Errorf("Select = %q", s)
	}
	// The new children are selected next once a2 passes.
	if err := tree.Transition(n, "a2", tree.Outcome{Status: tree.AgentDone, Guard: tree.GuardPass}, 5); err != nil {
		t.Fatal(err)
	}
	if s := tree.Select(n).String(); s != "status=open id=b.1 path=root/b/b.1 next=execute attempts=0/5" {
		t.Errorf("Select = %q", s)
	}
}

// TestTransitionDecomposedAtBounds: children at the bounds the update
// checks (a criterion of 4,096 characters, max_attempts 1 and
// MaxAttemptsLimit) are taken; one character or attempt past them is not.
func TestTransitionDecomposedAtBounds(t *testing.T) {
	at := strings.Repeat("é", 4096)
	for _, max := range []int{1, tree.MaxAttemptsLimit} {
		n := txTree()
		kids := []tree.NewChild{{Title: "T", Acceptance: []string{at}, Next: tree.NextExecute}}
		if err := tree.Transition(n, "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: kids}, max); err != nil {
			t.Errorf("max_attempts %d, a criterion of 4096 characters: %v", max, err)
		}
	}
	for _, tt := range []struct {
		criterion string
		max       int
		want      string
	}{
		{at + "é", 3, "child 1: acceptance criterion longer than 4096 characters"},
		{"x", tree.MaxAttemptsLimit + 1, fmt.Sprintf("max_attempts for new children must be 1 to %d, got %d", tree.MaxAttemptsLimit, tree.MaxAttemptsLimit+1)},
	} {
		kids := []tree.NewChild{{Title: "T", Acceptance: []string{tt.criterion}, Next: tree.NextExecute}}
		err := tree.Transition(txTree(), "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: kids}, tt.max)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Transition error = %v, want %q", err, tt.want)
		}
	}
}

func TestTransitionErrors(t *testing.T) {
	one := []tree.NewChild{{Title: "T", Acceptance: []string{}, Next: tree.NextExecute}}
	tests := []struct {
		name        string
		selected    string
		outcome     tree.Outcome
		maxAttempts int
		want        string
	}{
		{"done+skipped", "b", tree.Outcome{Status: tree.AgentDone, Guard: tree.GuardSkipped}, 3, "no transition for status=done guard=skipped"},
		{"done without guard", "b", tree.Outcome{Status: tree.AgentDone}, 3, "no transition for status=done guard="},
		{"retry+pass", "b", tree.Outcome{Status: tree.AgentRetry, Guard: tree.GuardPass}, 3, "no transition for status=retry guard=pass"},
		{"retry+fail", "b", tree.Outcome{Status: tree.AgentRetry, Guard: tree.GuardFail}, 3, "no transition for status=retry guard=fail"},
		{"decomposed+pass", "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardPass, Children: one}, 3, "no transition for status=decomposed guard=pass"},
		{"decomposed+fail", "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardFail, Children: one}, 3, "no transition for status=decomposed guard=fail"},
		{"unknown status", "b", tree.Outcome{Status: "finished", Guard: tree.GuardPass}, 3, "no transition for status=finished guard=pass"},
		{"empty outcome", "b", tree.Outcome{}, 3, "no transition for status= guard="},
		{"decomposed without children", "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped}, 3, "status=decomposed without children"},
		{"decomposed with empty children", "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: []tree.NewChild{}}, 3, "status=decomposed without children"},
		{"decomposed with max_attempts 0", "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: one}, 0, "max_attempts for new children must be 1 to 1000000, got 0"},
		{"decomposed with negative max_attempts", "b", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: one}, -4, "max_attempts for new children must be 1 to 1000000, got -4"},
		{"unknown selected", "zz", tree.Outcome{Status: tree.AgentDone, Guard: tree.GuardPass}, 3, "selected node 'zz' not found"},
		{"internal node selected", "a", tree.Outcome{Status: tree.AgentDone, Guard: tree.GuardPass}, 3, "selected node 'a' is not an open leaf"},
		{"passed leaf selected", "c", tree.Outcome{Status: tree.AgentDone, Guard: tree.GuardFail}, 3, "selected node 'c' is not an open leaf"},
		{"passed leaf under open parent", "a1", tree.Outcome{Status: tree.AgentRetry, Guard: tree.GuardSkipped}, 3, "selected node 'a1' is not an open leaf"},
		{"blocked+pass", "b", tree.Outcome{Status: tree.AgentBlocked, Guard: tree.GuardPass, Question: "Q?"}, 3, "no transition for status=blocked guard=pass"},
		{"blocked without a question", "b", tree.Outcome{Status: tree.AgentBlocked, Guard: tree.GuardSkipped}, 3, "status=blocked without a question"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := txTree()
			// Store a's children out of order: an error must not even sort.
			a := n.Children[0]
			a.Children[0], a.Children[1] = a.Children[1], a.Children[0]
			before := n.Clone()
			err := tree.Transition(n, tt.selected, tt.outcome, tt.maxAttempts)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Transition error = %v, want %q", err, tt.want)
			}
			if !tree.Equal(n, before) {
				t.Errorf("tree changed by a failed Transition:\n%s", tree.Encode(n))
			}
		})
	}
}

// TestTransitionSorts: a successful transition leaves the tree sorted.
func TestTransitionSorts(t *testing.T) {
	n := nd("root", 0, nd("z", 2), nd("y", 1, nd("y2", 2), nd("y1", 1)))
	if err := tree.Transition(n, "z", tree.Outcome{Status: tree.AgentRetry, Guard: tree.GuardSkipped}, 3); err != nil {
		t.Fatal(err)
	}
	if n.Children[0].ID != "y" || n.Children[0].Children[0].ID != "y1" {
		t.Errorf("not sorted after Transition:\n%s", tree.Encode(n))
	}
	if got := find(t, n, "z").Attempts; got != 1 {
		t.Errorf("z attempts = %d", got)
	}
}

func TestDerivePasses(t *testing.T) {
	n := nd("root", 0,
		nd("a", 1, passed(nd("a1", 1)), nd("a2", 2, passed(nd("a21", 1)))),
		nd("b", 2, passed(nd("b1", 1)), nd("b2", 2)),
		nd("c", 3),
	)
	if tree.DerivePasses(n) {
		t.Errorf("root derived passed with open leaves")
	}
	for id, want := range map[string]bool{"a": true, "a2": true, "b": false, "c": false, "root": false} {
		if got := find(t, n, id).Passes; got != want {
			t.Errorf("%s.passes = %v, want %v", id, got, want)
		}
	}
	// A pass is never cleared, even if inconsistent.
	m := passed(nd("root", 0, nd("x", 1)))
	if !tree.DerivePasses(m) || !m.Passes {
		t.Errorf("DerivePasses cleared a pass")
	}
	if tree.DerivePasses(nd("leaf", 0)) {
		t.Errorf("open leaf derived passed")
	}
}

// An open child does not stop the derivation: a later sibling whose
// children all pass is still marked passed (as after tree-edit remove).
func TestDerivePassesAfterOpenSibling(t *testing.T) {
	n := nd("root", 0,
		nd("a", 1),
		nd("b", 2, passed(nd("b1", 1)), passed(nd("b2", 2))),
	)
	if tree.DerivePasses(n) {
		t.Errorf("root derived passed with an open leaf")
	}
	if !find(t, n, "b").Passes {
		t.Errorf("b.passes = false after its open sibling a, want true")
	}
}

func TestChildIDs(t *testing.T) {
	long := "a" + strings.Repeat("b", 127) // 128 characters
	tests := []struct {
		name   string
		tree   *tree.Node
		parent string
		k      int
		want   []string
	}{
		{"plain", nd("root", 0, nd("b", 1)), "b", 3, []string{"b.1", "b.2", "b.3"}},
		{"none", nd("root", 0, nd("b", 1)), "b", 0, []string{}},
		{"b.1 taken elsewhere", nd("root", 0, nd("a", 1, nd("b.1", 1)), nd("b", 2)), "b", 2, []string{"b.2", "b.3"}},
		{"gaps reused in order", nd("root", 0, nd("b", 1), nd("b.2", 2), nd("b.4", 3)), "b", 3, []string{"b.1", "b.3", "b.5"}},
		{"root parent", nd("root", 0), "root", 1, []string{"root.1"}},
		{"128-character parent", nd("root", 0, nd(long, 1)), long, 2, []string{
			"a" + strings.Repeat("b", 116) + "-942b6e2f.1",
			"a" + strings.Repeat("b", 116) + "-942b6e2f.2",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tree.ChildIDs(tt.tree, tt.parent, tt.k)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ChildIDs = %q, want %q", got, tt.want)
			}
			if again := tree.ChildIDs(tt.tree, tt.parent, tt.k); !slices.Equal(got, again) {
				t.Errorf("ChildIDs not deterministic: %q then %q", got, again)
			}
		})
	}
}

// TestChildIDsLongParents: near and at MaxIDLen, ids stay valid, unique and
// distinct for distinct parents.
func TestChildIDsLongParents(t *testing.T) {
	for _, plen := range []int{1, 100, 117, 118, 125, 126, 127, 128} {
		t.Run(fmt.Sprint(plen), func(t *testing.T) {
			parent := strings.Repeat("p", plen)
			twin := strings.Repeat("p", plen-1) + "q" // same prefix, distinct parent
			root := nd("root", 0, nd(parent, 1), nd(twin, 2))
			ids := tree.ChildIDs(root, parent, 120)
			twinIDs := tree.ChildIDs(root, twin, 120)
			seen := map[string]bool{"root": true, parent: true, twin: true}
			for _, id := range append(slices.Clone(ids), twinIDs...) {
				if len(id) > tree.MaxIDLen || !tree.ValidID(id) {
					t.Fatalf("invalid id %q (%d)", id, len(id))
				}
				if seen[id] {
					t.Fatalf("id %q not unique", id)
				}
				seen[id] = true
			}
			if plen+2 <= tree.MaxIDLen && ids[0] != parent+".1" {
				t.Errorf("first id = %q, want %q", ids[0], parent+".1")
			}
			// Decompose for real and check the tree loads.
			kids := make([]tree.NewChild, 12)
			for i := range kids {
				kids[i] = tree.NewChild{Title: "T", Acceptance: []string{}, Next: tree.NextExecute}
			}
			for _, id := range []string{parent, twin} {
				if err := tree.Transition(root, id, tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: kids}, 3); err != nil {
					t.Fatal(err)
				}
			}
			mustLoad(t, tree.Encode(root))
			// And one level deeper, from a child whose id is already long.
			deep := find(t, root, parent).Children[0].ID
			if err := tree.Transition(root, deep, tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: kids}, 3); err != nil {
				t.Fatal(err)
			}
			mustLoad(t, tree.Encode(root))
		})
	}
}

func TestChildIDsMixedForms(t *testing.T) {
	parent := strings.Repeat("r", 126) // "<parent>.9" fits, "<parent>.10" does not
	ids := tree.ChildIDs(nd(parent, 0), parent, 11)
	if ids[8] != parent+".9" {
		t.Errorf("ids[8] = %q, want %q", ids[8], parent+".9")
	}
	if want := strings.Repeat("r", 116) + "-840b59e1.10"; ids[9] != want {
		t.Errorf("ids[9] = %q, want %q", ids[9], want)
	}
	if want := strings.Repeat("r", 116) + "-840b59e1.11"; ids[10] != want {
		t.Errorf("ids[10] = %q, want %q", ids[10], want)
	}
}

// blocked makes the leaf wait with the question, consuming no attempt; a
// waiting leaf takes no transition; a leaf with MaxAnswers answers may ask
// no more.
func TestTransitionBlocked(t *testing.T) {
	n := txTree()
	b := find(t, n, "b")
	b.Attempts = 1
	if err := tree.Transition(n, "b", tree.Outcome{Status: tree.AgentBlocked, Guard: tree.GuardSkipped, Question: "Postgres or SQLite?"}, 3); err != nil {
		t.Fatal(err)
	}
	b = find(t, n, "b")
	if b.Waiting != "Postgres or SQLite?" || b.Attempts != 1 || b.Passes {
		t.Fatalf("blocked: %+v", b)
	}
	if ps := tree.Check(n); len(ps) > 0 {
		t.Fatalf("blocked tree invalid: %v", ps)
	}
	before := n.Clone()
	err := tree.Transition(n, "b", tree.Outcome{Status: tree.AgentDone, Guard: tree.GuardPass}, 3)
	if err == nil || err.Error() != "selected node 'b' waits for an operator's answer (tree-edit answer)" || !tree.Equal(n, before) {
		t.Fatalf("a waiting leaf took a transition: %v", err)
	}

	full := txTree()
	c := find(t, full, "b")
	for range tree.MaxAnswers {
		c.Answers = append(c.Answers, tree.Answer{Question: "Q?", Answer: "A."})
	}
	err = tree.Transition(full, "b", tree.Outcome{Status: tree.AgentBlocked, Guard: tree.GuardSkipped, Question: "Again?"}, 3)
	if err == nil || !strings.Contains(err.Error(), "no more questions") {
		t.Fatalf("a 65th question: %v", err)
	}

	long := txTree()
	q := strings.Repeat("é", 16385)
	if err := tree.Transition(long, "b", tree.Outcome{Status: tree.AgentBlocked, Guard: tree.GuardSkipped, Question: q}, 3); err != nil {
		t.Fatal(err)
	}
	if w := find(t, long, "b").Waiting; utf8.RuneCountInString(w) != 16384 {
		t.Errorf("question kept %d code points, want 16384", utf8.RuneCountInString(w))
	}
	if _, ps := tree.Load(tree.Encode(long)); len(ps) > 0 {
		t.Errorf("a cut question does not load: %v", ps)
	}
}
