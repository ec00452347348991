package runrecord

import (
	"slices"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

func TestCountNodes(t *testing.T) {
	leaf := func(id string, passes bool, attempts int) *tree.Node {
		return &tree.Node{ID: id, Passes: passes, Attempts: attempts, MaxAttempts: 3}
	}
	root := &tree.Node{ID: "r", MaxAttempts: 3, Children: []*tree.Node{
		leaf("a", true, 1), leaf("b", false, 3), leaf("c", false, 2),
		{ID: "d", Passes: true, MaxAttempts: 3, Children: []*tree.Node{leaf("d1", true, 0)}},
	}}
	want := Nodes{Total: 6, Passed: 3, Open: 2, Stuck: 1}
	if got := CountNodes(root); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got := CountNodes(nil); got != (Nodes{}) {
		t.Fatalf("nil tree: %+v", got)
	}
}

// StuckLeaves lists every open leaf with no attempts left, in selection
// order, and a record that lists them reads back as written.
func TestStuckLeaves(t *testing.T) {
	leaf := func(id string, order int64, passes bool, attempts int) *tree.Node {
		return &tree.Node{ID: id, Order: order, Title: "T " + id, Passes: passes, Attempts: attempts, MaxAttempts: 3}
	}
	root := &tree.Node{ID: "r", MaxAttempts: 3, Children: []*tree.Node{
		leaf("z", 3, false, 3), leaf("a", 1, false, 3), leaf("b", 2, false, 2), leaf("p", 4, true, 3),
	}}
	got := StuckLeaves(root)
	want := []StuckLeaf{{ID: "a", Path: "r/a", Title: "T a", Attempts: 3, MaxAttempts: 3}, {ID: "z", Path: "r/z", Title: "T z", Attempts: 3, MaxAttempts: 3}}
	if !slices.Equal(got, want) {
		t.Fatalf("StuckLeaves = %+v, want %+v", got, want)
	}
	if s := StuckLeaves(&tree.Node{ID: "r", MaxAttempts: 3}); s != nil {
		t.Errorf("no stuck leaf: %+v", s)
	}
	r := Record{Version: 1, ID: "run-s", RunID: "run-s", Branch: "runner/run-s", Status: Stuck, Log: []Entry{}, StuckLeaves: got}
	back, err := Parse(Encode(r))
	if err != nil || !slices.Equal(back.StuckLeaves, want) {
		t.Fatalf("Parse(Encode) = %+v, %v", back.StuckLeaves, err)
	}
}

// A run that ends stuck with several stuck leaves names every one.
func TestStuckReason(t *testing.T) {
	one := []StuckLeaf{{ID: "a", Path: "r/a"}}
	if got := StuckReason("id=a", one); got != "id=a" {
		t.Errorf("one stuck leaf: %q", got)
	}
	two := append(one, StuckLeaf{ID: "c", Path: "r/b/c"})
	if got, want := StuckReason("id=a", two), "id=a (2 stuck leaves: r/a, r/b/c)"; got != want {
		t.Errorf("two: %q, want %q", got, want)
	}
}
