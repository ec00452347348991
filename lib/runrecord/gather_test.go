package runrecord

import (
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
