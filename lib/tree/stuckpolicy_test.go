package tree_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/tree"
)

// stuckLeaf is n with its attempts used up.
func stuckLeaf(n *tree.Node) *tree.Node { n.Attempts = n.MaxAttempts; return n }

// waitingLeaf is n waiting for an answer.
func waitingLeaf(n *tree.Node) *tree.Node { n.Waiting = "Which one?"; return n }

// Under skip, selection passes over the leaves with no attempts left and
// the run ends stuck only when no leaf is left to work; stop and
// decompose select as Select does.
func TestSelectWithPolicy(t *testing.T) {
	tests := []struct {
		name             string
		root             *tree.Node
		stop, skip, deco string // Selection.String() under each policy
	}{
		{"first leaf stuck, an independent one after it",
			nd("root", 0, stuckLeaf(nd("a", 1)), nd("b", 2)),
			"status=stuck id=a path=root/a next=execute attempts=3/3",
			"status=open id=b path=root/b next=execute attempts=0/3",
			"status=stuck id=a path=root/a next=execute attempts=3/3"},
		{"a stuck child keeps its parent open: its sibling and the parent's siblings go on",
			nd("root", 0, nd("a", 1, stuckLeaf(nd("a1", 1)), nd("a2", 2)), nd("b", 2)),
			"status=stuck id=a1 path=root/a/a1 next=execute attempts=3/3",
			"status=open id=a2 path=root/a/a2 next=execute attempts=0/3",
			"status=stuck id=a1 path=root/a/a1 next=execute attempts=3/3"},
		{"the parent's other children passed: the next subtree",
			nd("root", 0, nd("a", 1, stuckLeaf(nd("a1", 1)), passed(nd("a2", 2))), nd("b", 2, nd("b1", 1))),
			"status=stuck id=a1 path=root/a/a1 next=execute attempts=3/3",
			"status=open id=b1 path=root/b/b1 next=execute attempts=0/3",
			"status=stuck id=a1 path=root/a/a1 next=execute attempts=3/3"},
		{"nothing left but stuck leaves: stuck, naming the leftmost",
			nd("root", 0, passed(nd("a", 1)), nd("b", 2, stuckLeaf(nd("b2", 2)), stuckLeaf(nd("b1", 1))), stuckLeaf(nd("c", 3))),
			"status=stuck id=b1 path=root/b/b1 next=execute attempts=3/3",
			"status=stuck id=b1 path=root/b/b1 next=execute attempts=3/3",
			"status=stuck id=b1 path=root/b/b1 next=execute attempts=3/3"},
		{"a leaf that waits is left to work: waiting before stuck",
			nd("root", 0, stuckLeaf(nd("a", 1)), waitingLeaf(nd("b", 2))),
			"status=stuck id=a path=root/a next=execute attempts=3/3",
			"status=waiting id=b path=root/b next=execute attempts=0/3",
			"status=stuck id=a path=root/a next=execute attempts=3/3"},
		{"no stuck leaf: the same under every policy",
			nd("root", 0, passed(nd("a", 1)), nd("b", 2)),
			"status=open id=b path=root/b next=execute attempts=0/3",
			"status=open id=b path=root/b next=execute attempts=0/3",
			"status=open id=b path=root/b next=execute attempts=0/3"},
		{"a leaf sent back has an attempt left: open under every policy",
			nd("root", 0, with(nd("a", 1), func(n *tree.Node) {
				n.Attempts, n.MaxAttempts, n.Next, n.SentBack = 3, 4, tree.NextDecompose, true
			})),
			"status=open id=a path=root/a next=decompose attempts=3/4",
			"status=open id=a path=root/a next=decompose attempts=3/4",
			"status=open id=a path=root/a next=decompose attempts=3/4"},
		{"complete", passed(nd("root", 0, passed(nd("a", 1)))), "status=complete", "status=complete", "status=complete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.root.Clone()
			for _, c := range []struct {
				p    tree.StuckPolicy
				want string
			}{{tree.StuckStop, tt.stop}, {tree.StuckSkip, tt.skip}, {tree.StuckDecompose, tt.deco}} {
				s := tree.SelectWith(tt.root, c.p)
				if got := s.String(); got != c.want {
					t.Errorf("SelectWith(%s) = %q, want %q", c.p, got, c.want)
				}
				if s.Node != nil {
					if n, path := tree.Find(tt.root, s.Node.ID); n != s.Node || path != s.Path {
						t.Errorf("SelectWith(%s): node is not the tree's node at %s", c.p, s.Path)
					}
				}
			}
			if got := tree.Select(tt.root).String(); got != tt.stop {
				t.Errorf("Select = %q, want stop's %q", got, tt.stop)
			}
			if !tree.Equal(tt.root, before) {
				t.Errorf("selection modified the tree")
			}
		})
	}
}

// Stuck lists every open leaf with no attempts left in selection order;
// passed subtrees hold none.
func TestStuckLists(t *testing.T) {
	root := nd("root", 0,
		nd("z", 3, stuckLeaf(nd("z1", 1))),
		nd("a", 1, nd("a2", 2), stuckLeaf(nd("a1", 1))),
		passed(nd("p", 2, passed(stuckLeaf(nd("p1", 1))))),
		with(nd("s", 4), func(n *tree.Node) { n.Attempts, n.MaxAttempts, n.SentBack = 3, 4, true }))
	var got []string
	for _, e := range tree.Stuck(root) {
		got = append(got, e.Path)
	}
	if want := []string{"root/a/a1", "root/z/z1"}; !slices.Equal(got, want) {
		t.Errorf("Stuck = %q, want %q", got, want)
	}
	if got, want := tree.StuckList(tree.Stuck(root)), "2 stuck leaves: 'a1' at root/a/a1 (3/3), 'z1' at root/z/z1 (3/3)"; got != want {
		t.Errorf("StuckList = %q, want %q", got, want)
	}
	if s := tree.Stuck(nd("root", 0, nd("a", 1))); len(s) != 0 {
		t.Errorf("Stuck of a tree with attempts left = %v", s)
	}
	if s := tree.Stuck(nil); len(s) != 0 {
		t.Errorf("Stuck(nil) = %v", s)
	}
}

// The transition that uses up a leaf's attempts sends it back once under
// decompose: next=decompose, one attempt more, sent_back; a leaf sent
// back before stays stuck, and the other policies send nothing back.
func TestSendBack(t *testing.T) {
	exhaust := func(p tree.StuckPolicy, n *tree.Node) (*tree.Node, bool) {
		t.Helper()
		root := nd("root", 0, n, nd("b", 2))
		if err := tree.Transition(root, n.ID, tree.Outcome{Status: tree.AgentDone, Guard: tree.GuardFail}, 3); err != nil {
			t.Fatal(err)
		}
		sent := tree.SendBack(root, n.ID, p)
		return find(t, root, n.ID), sent
	}
	lastTry := func() *tree.Node { return with(nd("a", 1), func(n *tree.Node) { n.Attempts = 2 }) }

	a, sent := exhaust(tree.StuckDecompose, lastTry())
	if !sent || a.Next != tree.NextDecompose || a.Attempts != 3 || a.MaxAttempts != 4 || !a.SentBack {
		t.Fatalf("decompose: sent=%v, a = next %s attempts %d/%d sent_back %v; want sent back, decompose, 3/4", sent, a.Next, a.Attempts, a.MaxAttempts, a.SentBack)
	}
	// Its one session in decompose mode: a retry uses the attempt, and
	// the leaf, sent back once, is stuck for good.
	root := nd("root", 0, a, nd("b", 2))
	if err := tree.Transition(root, "a", tree.Outcome{Status: tree.AgentRetry, Guard: tree.GuardSkipped}, 3); err != nil {
		t.Fatal(err)
	}
	if tree.SendBack(root, "a", tree.StuckDecompose) {
		t.Errorf("a leaf sent back before was sent back again")
	}
	if s := tree.SelectWith(root, tree.StuckDecompose); s.Status != tree.StatusStuck || s.Node.ID != "a" || s.Node.MaxAttempts != 4 {
		t.Errorf("after its decompose attempt: %s, want stuck a at 4/4", s)
	}
	// Or it decomposes: its children are worked.
	root = nd("root", 0, a.Clone(), nd("b", 2))
	find(t, root, "a").Attempts = 3
	kids := []tree.NewChild{{Title: "Half", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute}}
	if err := tree.Transition(root, "a", tree.Outcome{Status: tree.AgentDecomposed, Guard: tree.GuardSkipped, Children: kids}, 3); err != nil {
		t.Fatal(err)
	}
	if s := tree.SelectWith(root, tree.StuckDecompose); s.String() != "status=open id=a.1 path=root/a/a.1 next=execute attempts=0/3" {
		t.Errorf("after the split: %s", s)
	}

	for _, p := range []tree.StuckPolicy{tree.StuckStop, tree.StuckSkip} {
		a, sent := exhaust(p, lastTry())
		if sent || a.Next != tree.NextExecute || a.Attempts != 3 || a.MaxAttempts != 3 || a.SentBack {
			t.Errorf("%s sent the leaf back: %+v", p, a)
		}
	}
	// Attempts left: nothing to send back.
	if a, sent := exhaust(tree.StuckDecompose, nd("a", 1)); sent || a.Attempts != 1 || a.MaxAttempts != 3 || a.SentBack {
		t.Errorf("a leaf with attempts left was sent back: %+v", a)
	}
	// No room for one attempt more: stuck.
	limit := with(nd("a", 1), func(n *tree.Node) { n.Attempts, n.MaxAttempts = tree.MaxAttemptsLimit-1, tree.MaxAttemptsLimit })
	if a, sent := exhaust(tree.StuckDecompose, limit); sent || a.MaxAttempts != tree.MaxAttemptsLimit {
		t.Errorf("a leaf at the attempts limit was sent back: %+v", a)
	}
	// Only an open leaf that does not wait goes back.
	for name, r := range map[string]*tree.Node{
		"passed":  nd("root", 0, passed(stuckLeaf(nd("a", 1)))),
		"waiting": nd("root", 0, waitingLeaf(stuckLeaf(nd("a", 1)))),
		"inner":   nd("root", 0, stuckLeaf(nd("a", 1, nd("a1", 1)))),
		"missing": nd("root", 0, nd("b", 1)),
	} {
		before := r.Clone()
		if tree.SendBack(r, "a", tree.StuckDecompose) || !tree.Equal(r, before) {
			t.Errorf("%s: SendBack changed the tree", name)
		}
	}
}

// sent_back is runner-owned: an agent's edit is put back, a human's is
// refused, and a passed node's is a change to a passed node.
func TestSentBackIsRunnerOwned(t *testing.T) {
	prev := nd("root", 0, with(nd("a", 1), func(n *tree.Node) { n.SentBack = true }), nd("b", 2))
	next := prev.Clone()
	find(t, next, "a").SentBack = false
	find(t, next, "b").SentBack = true
	notes := tree.RestoreRunnerOwned(prev, next)
	if want := []string{"root/a: sent_back false restored to true", "root/b: sent_back true restored to false"}; !slices.Equal(notes, want) {
		t.Errorf("notes = %q, want %q", notes, want)
	}
	if !tree.Equal(prev, next) {
		t.Errorf("not restored:\n%s", tree.Encode(next))
	}

	edited := prev.Clone()
	find(t, edited, "b").SentBack = true
	ps := tree.RunnerOwnedChanges(prev, edited, tree.ByHuman, nil)
	if len(ps) != 1 || ps[0].Message != "sent_back of node 'b' changed from false to true: runner-owned fields change only through the loop or tree-edit" {
		t.Errorf("a human's sent_back: %v", ps)
	}
	if ps := tree.RunnerOwnedChanges(prev, edited, tree.ByLoop, nil); len(ps) != 0 {
		t.Errorf("the loop's sent_back refused: %v", ps)
	}
	added := prev.Clone()
	added.Children = append(added.Children, with(nd("c", 3), func(n *tree.Node) { n.SentBack = true }))
	if ps := tree.RunnerOwnedChanges(prev, added, tree.ByHuman, nil); len(ps) != 1 {
		t.Errorf("a new node sent back by a human: %v", ps)
	}

	// A passed node's sent_back is part of it: its own, and a passed
	// descendant's under a passed parent.
	done := passed(nd("root", 0, passed(with(nd("a", 1), func(n *tree.Node) { n.SentBack = true })), passed(nd("b", 2, passed(nd("b1", 1))))))
	for _, id := range []string{"a", "b", "b1"} {
		changed := done.Clone()
		x := find(t, changed, id)
		x.SentBack = !x.SentBack
		ps := tree.Immutability(done, changed)
		if len(ps) != 1 || ps[0].Message != "passed node '"+id+"' changed in next tree" {
			t.Errorf("sent_back of passed %s flipped: %v", id, ps)
		}
	}
}

// A leaf sent back is written with sent_back after max_attempts, and
// reads back the same; one that was not has no such key.
func TestSentBackEncoding(t *testing.T) {
	root := nd("root", 0, with(nd("a", 1), func(n *tree.Node) { n.Attempts, n.MaxAttempts, n.SentBack = 3, 4, true }), nd("b", 2))
	data := tree.Encode(root.Clone())
	back := mustLoad(t, data)
	if !tree.Equal(back, root) {
		t.Fatalf("Load(Encode) differs:\n%s", data)
	}
	want := "\"max_attempts\": 4,\n      \"sent_back\": true,\n      \"children\""
	if !strings.Contains(string(data), want) || strings.Count(string(data), "sent_back") != 1 {
		t.Errorf("encoding:\n%s\nwant once: %q", data, want)
	}
}

// config.toml's stuck_policy accepts exactly the policies lib/tree
// decides with, the default first.
func TestStuckPoliciesMatchConfig(t *testing.T) {
	var ours []string
	for _, p := range tree.StuckPolicies {
		ours = append(ours, string(p))
	}
	if !slices.Equal(ours, config.StuckPolicies) || config.Default().StuckPolicy != string(tree.StuckStop) {
		t.Errorf("tree %q, config %q (default %q)", ours, config.StuckPolicies, config.Default().StuckPolicy)
	}
}
