package provenance

import (
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

func node(id string, passes bool) *tree.Node {
	return &tree.Node{ID: id, Title: id, Goal: id, Acceptance: []string{}, Next: tree.NextExecute, Passes: passes, MaxAttempts: 3, Children: []*tree.Node{}}
}

func TestDiscountAndReopen(t *testing.T) {
	root := &tree.Node{ID: "root", Title: "r", Goal: "r", Acceptance: []string{}, Next: tree.NextDecompose, Passes: true, MaxAttempts: 3,
		Children: []*tree.Node{node("a", true), node("b", true)}}
	unbacked := []Unbacked{{Node: "b", Leaf: "b"}, {Node: "root", Leaf: "b"}}
	d := Discount(root, unbacked)
	if d.Passes || d.Children[1].Passes || !d.Children[0].Passes {
		t.Fatalf("Discount: root %v a %v b %v; want false true false", d.Passes, d.Children[0].Passes, d.Children[1].Passes)
	}
	if !root.Passes || !root.Children[1].Passes {
		t.Fatal("Discount changed its input")
	}
	if Discount(root, nil) != root {
		t.Error("Discount with every pass backed is not the tree itself")
	}
	if !Reopens(root, d) || Reopens(root, root) {
		t.Error("Reopens: want true for the discounted tree, false for the same tree")
	}
	// Reopening b alone opens b in the judged tree; a stays passed.
	next := root.Clone()
	next.Passes, next.Children[1].Passes = false, false
	r := Reopen(root, next, unbacked)
	if r.Passes || r.Children[1].Passes || !r.Children[0].Passes {
		t.Errorf("Reopen: root %v a %v b %v; want false true false", r.Passes, r.Children[0].Passes, r.Children[1].Passes)
	}
	// A backed node stays passed whatever next says.
	if r := Reopen(root, next, []Unbacked{{Node: "a"}}); !r.Children[0].Passes || !r.Passes {
		t.Error("Reopen opened a node that next keeps passed, or one not listed")
	}
}

// TestLeafNeverReached: a pass commit that claims the iteration the run
// allocates next (or a later one) backs nothing, log or not: the run never
// reached it, so the commit was made by hand or rewritten. One that claims
// the iteration before it, with no log kept (a clone), backs the pass.
func TestLeafNeverReached(t *testing.T) {
	logs := t.TempDir()
	for _, c := range []struct {
		iter   int
		backed bool
	}{{4, true}, {5, false}, {6, false}} {
		p, reason, err := leaf([]passCommit{{sha: "0123456789abcdef", iter: c.iter}}, "a", "r1", 5, logs, map[string]bool{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Commit != ""; got != c.backed {
			t.Errorf("iteration %d claimed, the run's next 5: backed %v (%q), want %v", c.iter, got, reason, c.backed)
		}
		if !c.backed && !strings.Contains(reason, "which run r1 never reached") {
			t.Errorf("iteration %d: reason %q", c.iter, reason)
		}
	}
}
