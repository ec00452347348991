package tree_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

// prevTree: root{ a(passed){a1(passed), a2(passed)}, b{b1, b2}, c(passed) }.
func prevTree() *tree.Node {
	return nd("root", 0,
		passed(nd("a", 1, passed(nd("a1", 1)), passed(nd("a2", 2)))),
		nd("b", 2, nd("b1", 1), nd("b2", 2)),
		passed(nd("c", 3)),
	)
}

// detach removes the node id from its parent and returns it.
func detach(t *testing.T, root *tree.Node, id string) *tree.Node {
	t.Helper()
	e, ok := tree.Index(root)[id]
	if !ok || e.Parent == nil {
		t.Fatalf("cannot detach %q", id)
	}
	i := slices.Index(e.Parent.Children, e.Node)
	e.Parent.Children = slices.Delete(e.Parent.Children, i, i+1)
	return e.Node
}

// attach appends child under the node id.
func attach(t *testing.T, root *tree.Node, id string, child *tree.Node) {
	t.Helper()
	n := find(t, root, id)
	n.Children = append(n.Children, child)
}

// move detaches id and attaches it under to.
func move(t *testing.T, root *tree.Node, id, to string) {
	t.Helper()
	attach(t, root, to, detach(t, root, id))
}

func TestImmutability(t *testing.T) {
	I := tree.LayerImmutability
	tests := []struct {
		name string
		edit func(t *testing.T, next *tree.Node)
		want tree.Problems
	}{
		{"untouched", func(*testing.T, *tree.Node) {}, nil},
		{"open node edited", func(t *testing.T, n *tree.Node) {
			b := find(t, n, "b")
			b.Title, b.Goal, b.Acceptance = "new", "new goal", []string{"new"}
			find(t, n, "b1").Order = 9
		}, nil},
		{"open node removed", func(t *testing.T, n *tree.Node) { detach(t, n, "b2") }, nil},
		{"open subtree removed", func(t *testing.T, n *tree.Node) { detach(t, n, "b") }, nil},
		{"open node moved", func(t *testing.T, n *tree.Node) { move(t, n, "b1", "root") }, nil},
		{"open runner fields edited are not this check's business", func(t *testing.T, n *tree.Node) {
			find(t, n, "b1").Attempts = 2
		}, nil},
		{"passed children stored out of order", func(t *testing.T, n *tree.Node) {
			a := find(t, n, "a")
			a.Children[0], a.Children[1] = a.Children[1], a.Children[0]
		}, nil},
		{"passed leaf missing", func(t *testing.T, n *tree.Node) { detach(t, n, "c") },
			tree.Problems{p(I, "root/c", "passed node 'c' missing in next tree")}},
		{"passed subtree missing", func(t *testing.T, n *tree.Node) { detach(t, n, "a") },
			tree.Problems{
				p(I, "root/a", "passed node 'a' missing in next tree"),
				p(I, "root/a/a1", "passed node 'a1' missing in next tree"),
				p(I, "root/a/a2", "passed node 'a2' missing in next tree"),
			}},
		{"passed node moved", func(t *testing.T, n *tree.Node) { move(t, n, "c", "b") },
			tree.Problems{p(I, "root/b/c", "passed node 'c' moved from parent 'root' to 'b'")}},
		{"passed child moved out of its passed parent", func(t *testing.T, n *tree.Node) { move(t, n, "a2", "root") },
			tree.Problems{
				p(I, "root/a", "passed node 'a' changed in next tree"),
				p(I, "root/a2", "passed node 'a2' moved from parent 'a' to 'root'"),
			}},
		{"passed subtree moved keeps its descendants", func(t *testing.T, n *tree.Node) { move(t, n, "a", "b") },
			tree.Problems{p(I, "root/b/a", "passed node 'a' moved from parent 'root' to 'b'")}},
		{"passed leaf title changed", func(t *testing.T, n *tree.Node) { find(t, n, "c").Title = "x" },
			tree.Problems{p(I, "root/c", "passed node 'c' changed in next tree")}},
		{"passed leaf order changed", func(t *testing.T, n *tree.Node) { find(t, n, "c").Order = 0 },
			tree.Problems{p(I, "root/c", "passed node 'c' changed in next tree")}},
		{"passed leaf reopened", func(t *testing.T, n *tree.Node) { find(t, n, "c").Passes = false },
			tree.Problems{p(I, "root/c", "passed node 'c' changed in next tree")}},
		{"passed leaf acceptance changed: the leaf, not its passed parent", func(t *testing.T, n *tree.Node) { find(t, n, "a1").Acceptance = []string{"more"} },
			tree.Problems{p(I, "root/a/a1", "passed node 'a1' changed in next tree")}},
		{"passed child's title changed: the child alone", func(t *testing.T, n *tree.Node) { find(t, n, "a2").Title = "x" },
			tree.Problems{p(I, "root/a/a2", "passed node 'a2' changed in next tree")}},
		{"passed node gained a child", func(t *testing.T, n *tree.Node) { move(t, n, "b2", "c") },
			tree.Problems{p(I, "root/c", "passed node 'c' changed in next tree")}},
		{"several problems sorted by id", func(t *testing.T, n *tree.Node) {
			find(t, n, "c").Goal = "x"
			detach(t, n, "a2")
		}, tree.Problems{
			p(I, "root/a", "passed node 'a' changed in next tree"),
			p(I, "root/a/a2", "passed node 'a2' missing in next tree"),
			p(I, "root/c", "passed node 'c' changed in next tree"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := prevTree()
			next := prev.Clone()
			tt.edit(t, next)
			keep := next.Clone()
			checkProblems(t, "Immutability", tree.Immutability(prev, next), tt.want)
			if !tree.Equal(next, keep) || !tree.Equal(prev, prevTree()) {
				t.Errorf("Immutability modified its arguments")
			}
		})
	}
}

func TestImmutabilityPassedRoot(t *testing.T) {
	prev := passed(nd("root", 0, passed(nd("a", 1))))
	checkProblems(t, "same", tree.Immutability(prev, prev.Clone()), nil)
	next := prev.Clone()
	next.Title = "renamed"
	checkProblems(t, "root changed", tree.Immutability(prev, next),
		tree.Problems{p(tree.LayerImmutability, "root", "passed node 'root' changed in next tree")})
	other := passed(nd("other", 0, passed(nd("a", 1))))
	checkProblems(t, "root replaced", tree.Immutability(prev, other), tree.Problems{
		p(tree.LayerImmutability, "other/a", "passed node 'a' moved from parent 'root' to 'other'"),
		p(tree.LayerImmutability, "root", "passed node 'root' missing in next tree"),
	}.Sorted())
}

func TestNewNodes(t *testing.T) {
	prev := prevTree()
	next := prev.Clone()
	attach(t, next, "b1", nd("z", 1))
	attach(t, next, "root", nd("m", 9, nd("m1", 1)))
	move(t, next, "b2", "c") // not new
	got := tree.NewNodes(prev, next)
	var ids, paths []string
	for _, e := range got {
		ids = append(ids, e.Node.ID)
		paths = append(paths, e.Path)
	}
	if !slices.Equal(ids, []string{"m", "m1", "z"}) || !slices.Equal(paths, []string{"root/m", "root/m/m1", "root/b/b1/z"}) {
		t.Errorf("NewNodes = %v at %v", ids, paths)
	}
	if got := tree.NewNodes(prev, prev.Clone()); len(got) != 0 {
		t.Errorf("NewNodes of an identical tree = %v", got)
	}
}

func TestChildAdditions(t *testing.T) {
	C := tree.LayerChildAddition
	base := func() *tree.Node { return nd("root", 0, nd("a", 1), nd("b", 2, nd("b1", 1)), passed(nd("c", 3))) }
	tests := []struct {
		name     string
		edit     func(t *testing.T, next *tree.Node) *tree.Node
		selected string
		status   string
		want     tree.Problems
	}{
		{"nothing new, done", func(_ *testing.T, n *tree.Node) *tree.Node { return n }, "a", tree.AgentDone, nil},
		{"decomposed: selected gains children", func(t *testing.T, n *tree.Node) *tree.Node {
			attach(t, n, "a", nd("a.1", 1))
			attach(t, n, "a", nd("a.2", 2))
			return n
		}, "a", tree.AgentDecomposed, nil},
		{"done: selected gains a child", func(t *testing.T, n *tree.Node) *tree.Node {
			attach(t, n, "a", nd("a.1", 1))
			return n
		}, "a", tree.AgentDone, tree.Problems{p(C, "root/a/a.1", "node 'a' gained child 'a.1' but status=done")}},
		{"retry: selected gains a child", func(t *testing.T, n *tree.Node) *tree.Node {
			attach(t, n, "a", nd("a.1", 1))
			return n
		}, "a", tree.AgentRetry, tree.Problems{p(C, "root/a/a.1", "node 'a' gained child 'a.1' but status=retry")}},
		{"decomposed: another node gains a child", func(t *testing.T, n *tree.Node) *tree.Node {
			attach(t, n, "a", nd("a.1", 1))
			attach(t, n, "b1", nd("x", 1))
			return n
		}, "a", tree.AgentDecomposed, tree.Problems{p(C, "root/b/b1/x", "node 'b1' gained child 'x' but only the selected node 'a' may gain children")}},
		{"new node at the root level", func(t *testing.T, n *tree.Node) *tree.Node {
			attach(t, n, "root", nd("d", 4))
			return n
		}, "a", tree.AgentDone, tree.Problems{p(C, "root/d", "node 'root' gained child 'd' but only the selected node 'a' may gain children")}},
		{"grandchild under a new child", func(t *testing.T, n *tree.Node) *tree.Node {
			attach(t, n, "a", nd("a.1", 1, nd("g", 1)))
			return n
		}, "a", tree.AgentDecomposed, tree.Problems{p(C, "root/a/a.1/g", "node 'a.1' gained child 'g' but only the selected node 'a' may gain children")}},
		{"moving an open node is not an addition", func(t *testing.T, n *tree.Node) *tree.Node {
			move(t, n, "b1", "a")
			return n
		}, "a", tree.AgentDone, nil},
		{"root replaced", func(_ *testing.T, n *tree.Node) *tree.Node {
			return nd("other", 0, n.Children...)
		}, "a", tree.AgentDone, tree.Problems{p(C, "other", "root replaced by new node 'other'")}},
		{"problems ordered by new id", func(t *testing.T, n *tree.Node) *tree.Node {
			attach(t, n, "b", nd("y", 5))
			attach(t, n, "a", nd("x", 1))
			return n
		}, "a", tree.AgentRetry, tree.Problems{
			p(C, "root/a/x", "node 'a' gained child 'x' but status=retry"),
			p(C, "root/b/y", "node 'b' gained child 'y' but only the selected node 'a' may gain children"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := base()
			next := tt.edit(t, prev.Clone())
			checkProblems(t, "ChildAdditions", tree.ChildAdditions(prev, next, tt.selected, tt.status), tt.want)
		})
	}
}

func TestStatusInvariants(t *testing.T) {
	S := tree.LayerStatus
	prev := nd("root", 0, nd("backend", 1, nd("auth", 1)), nd("b", 2))
	grow := func(k int) *tree.Node {
		n := prev.Clone()
		for i := range k {
			attach(t, n, "auth", nd("auth."+string(rune('1'+i)), int64(i+1)))
		}
		return n
	}
	tests := []struct {
		name     string
		next     *tree.Node
		selected string
		status   string
		want     tree.Problems
	}{
		{"decomposed with children", grow(2), "auth", tree.AgentDecomposed, nil},
		{"decomposed without children", grow(0), "auth", tree.AgentDecomposed,
			tree.Problems{p(S, "root/backend/auth", "status=decomposed but selected node 'auth' did not gain children (prev=0, next=0)")}},
		{"done gained children", grow(2), "auth", tree.AgentDone,
			tree.Problems{p(S, "root/backend/auth", "status=done but selected node 'auth' gained children (prev=0, next=2)")}},
		{"retry gained children", grow(1), "auth", tree.AgentRetry,
			tree.Problems{p(S, "root/backend/auth", "status=retry but selected node 'auth' gained children (prev=0, next=1)")}},
		{"done unchanged", grow(0), "auth", tree.AgentDone, nil},
		{"retry unchanged", grow(0), "auth", tree.AgentRetry, nil},
		{"unknown status", grow(0), "auth", "finished",
			tree.Problems{p(S, "root/backend/auth", `unknown status "finished"`)}},
		{"selected unknown in prev", grow(0), "zz", tree.AgentDone,
			tree.Problems{p(S, "", "selected node 'zz' not found in previous tree")}},
		{"selected missing in next", nd("root", 0, nd("b", 2)), "auth", tree.AgentDone,
			tree.Problems{p(S, "", "selected node 'auth' missing in next tree")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkProblems(t, "StatusInvariants", tree.StatusInvariants(prev, tt.next, tt.selected, tt.status), tt.want)
		})
	}
	// The message as seed 002 §4 prints it.
	got := tree.StatusInvariants(prev, grow(0), "auth", tree.AgentDecomposed)[0].Message
	if want := "status=decomposed but selected node 'auth' did not gain children (prev=0, next=0)"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	got = tree.StatusInvariants(prev, grow(2), "auth", tree.AgentDone)[0].Message
	if want := "status=done but selected node 'auth' gained children (prev=0, next=2)"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}

func TestRestoreRunnerOwned(t *testing.T) {
	prev := nd("root", 0,
		with(nd("a", 1), func(n *tree.Node) { n.Attempts = 1 }),
		passed(nd("b", 2)),
		nd("c", 3, nd("c1", 1)),
	)
	next := prev.Clone()
	a := find(t, next, "a")
	a.Passes, a.Attempts, a.MaxAttempts, a.Next = true, 0, 9, tree.NextDecompose
	a.Title, a.Goal, a.Acceptance = "edited", "edited goal", []string{"edited"}
	find(t, next, "b").Passes = false
	move(t, next, "c1", "root")
	find(t, next, "c1").Attempts = 3
	attach(t, next, "c", with(nd("new", 1), func(n *tree.Node) { n.Attempts, n.MaxAttempts, n.Next = 2, 7, tree.NextDecompose }))

	notes := tree.RestoreRunnerOwned(prev, next)
	want := []string{
		"root/a: attempts 0 restored to 1",
		"root/a: max_attempts 9 restored to 3",
		"root/a: next decompose restored to execute",
		"root/a: passes true restored to false",
		"root/b: passes false restored to true",
		"root/c1: attempts 3 restored to 0",
	}
	if !slices.Equal(notes, want) {
		t.Errorf("notes =\n%q\nwant\n%q", notes, want)
	}
	a = find(t, next, "a")
	if a.Passes || a.Attempts != 1 || a.MaxAttempts != 3 || a.Next != tree.NextExecute {
		t.Errorf("a not restored: %+v", a)
	}
	if a.Title != "edited" || a.Goal != "edited goal" || !slices.Equal(a.Acceptance, []string{"edited"}) {
		t.Errorf("agent-owned fields of a were touched: %+v", a)
	}
	if !find(t, next, "b").Passes || find(t, next, "c1").Attempts != 0 {
		t.Errorf("b or c1 not restored")
	}
	if _, path := tree.Find(next, "c1"); path != "root/c1" {
		t.Errorf("c1 moved back to %s; only fields are restored", path)
	}
	nw := find(t, next, "new")
	if nw.Attempts != 2 || nw.MaxAttempts != 7 || nw.Next != tree.NextDecompose {
		t.Errorf("new node changed: %+v", nw)
	}

	// Nothing to restore: no notes, tree unchanged.
	same := prev.Clone()
	if notes := tree.RestoreRunnerOwned(prev, same); len(notes) != 0 {
		t.Errorf("notes for an unchanged tree: %q", notes)
	}
	if !tree.Equal(same, prev) {
		t.Errorf("unchanged tree modified")
	}
}

func TestCheckAgentEdits(t *testing.T) {
	C, S, I := tree.LayerChildAddition, tree.LayerStatus, tree.LayerImmutability
	const added = "added by the agent; only the runner adds children, from a decomposed output"
	tests := []struct {
		name string
		edit func(t *testing.T, n *tree.Node)
		want tree.Problems
	}{
		{"no edits", func(*testing.T, *tree.Node) {}, nil},
		{"open node edited", func(t *testing.T, n *tree.Node) {
			find(t, n, "b1").Goal = "better goal"
			find(t, n, "b2").Acceptance = []string{"b2 works"}
		}, nil},
		{"open nodes removed and moved", func(t *testing.T, n *tree.Node) {
			detach(t, n, "b2")
			move(t, n, "b3", "root")
		}, tree.Problems{
			p(I, "root/b/b2", "open node 'b2' missing in next tree: only a decomposition changes the tree's shape"),
			p(I, "root/b/b3", "open node 'b3' moved from parent 'b' to 'root'"),
		}},
		{"open node reordered", func(t *testing.T, n *tree.Node) { find(t, n, "b3").Order = 0 },
			tree.Problems{p(I, "root/b/b3", "open node 'b3' moved: order 3 changed to 0")}},
		{"runner-owned fields edited (restored later, not an error here)", func(t *testing.T, n *tree.Node) {
			b1 := find(t, n, "b1")
			b1.Attempts, b1.Next = 2, tree.NextDecompose
		}, nil},
		{"new node under another open node", func(t *testing.T, n *tree.Node) { attach(t, n, "b2", nd("x", 1)) },
			tree.Problems{p(C, "root/b/b2/x", "node 'x' "+added)}},
		{"new node at the top", func(t *testing.T, n *tree.Node) { attach(t, n, "root", nd("x", 9)) },
			tree.Problems{p(C, "root/x", "node 'x' "+added)}},
		{"new node under the selected node", func(t *testing.T, n *tree.Node) { attach(t, n, "b1", nd("b1.1", 1)) },
			tree.Problems{
				p(S, "root/b/b1", "selected node 'b1' gained children (prev=0, next=1)"),
				p(C, "root/b/b1/b1.1", "node 'b1.1' "+added),
			}},
		{"selected gained children via a moved open node", func(t *testing.T, n *tree.Node) { move(t, n, "b2", "b1") },
			tree.Problems{
				p(S, "root/b/b1", "selected node 'b1' gained children (prev=0, next=1)"),
				p(I, "root/b/b2", "open node 'b2' moved from parent 'b' to 'b1'"),
			}},
		{"selected removed", func(t *testing.T, n *tree.Node) { detach(t, n, "b1") },
			tree.Problems{p(S, "", "selected node 'b1' missing in next tree")}},
		{"everything at once, sorted by path", func(t *testing.T, n *tree.Node) {
			detach(t, n, "b1")
			find(t, n, "a").Title = "rewritten"
			attach(t, n, "b3", nd("new", 1))
		}, tree.Problems{
			p(S, "", "selected node 'b1' missing in next tree"),
			p(I, "root/a", "passed node 'a' changed in next tree"),
			p(C, "root/b/b3/new", "node 'new' "+added),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := nd("root", 0, passed(nd("a", 1)), nd("b", 2, nd("b1", 1), nd("b2", 2), nd("b3", 3)))
			edited := prev.Clone()
			tt.edit(t, edited)
			checkProblems(t, "CheckAgentEdits", tree.CheckAgentEdits(prev, edited, "b1"), tt.want)
		})
	}
}

// immutabilityByDefinition is seed 002 §3 read literally: every passed
// node of prev, looked up by id in next, is present, under the same parent
// and equal (children compared in (order, id) order).
func immutabilityByDefinition(prev, next *tree.Node) []string {
	before, after := tree.Index(prev), tree.Index(next)
	var out []string
	for id, b := range before {
		if !b.Node.Passes {
			continue
		}
		a, ok := after[id]
		pid := func(n *tree.Node) string {
			if n == nil {
				return ""
			}
			return n.ID
		}
		switch {
		case !ok:
			out = append(out, id+" missing")
		case pid(b.Parent) != pid(a.Parent):
			out = append(out, id+" moved")
		default:
			// Changed: its own fields, its children's ids, or the subtree
			// of a child that has not passed (a passed child reports its
			// own subtree).
			x, y := b.Node.Clone(), a.Node.Clone()
			tree.Sort(x)
			tree.Sort(y)
			same := len(x.Children) == len(y.Children)
			for i := 0; same && i < len(x.Children); i++ {
				xc, yc := x.Children[i], y.Children[i]
				same = xc.ID == yc.ID && (xc.Passes || tree.Equal(xc, yc))
				x.Children[i], y.Children[i] = nd(xc.ID, 0), nd(yc.ID, 0)
			}
			if !same || !tree.Equal(x, y) {
				out = append(out, id+" changed")
			}
		}
	}
	slices.Sort(out)
	return out
}

// Immutability agrees with the definition on random trees and random
// edits: field changes, moves, deletions, insertions and reorderings.
func TestImmutabilityByDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 0
		var gen func(depth int) *tree.Node
		gen = func(depth int) *tree.Node {
			n++
			node := nd(fmt.Sprintf("n%d", n), int64(rng.IntN(3)))
			node.Passes = rng.IntN(3) > 0
			if depth < 4 {
				for range rng.IntN(4) {
					node.Children = append(node.Children, gen(depth+1))
				}
			}
			return node
		}
		prev := gen(0)
		next := prev.Clone()
		var all []*tree.Node
		var collect func(x *tree.Node)
		collect = func(x *tree.Node) {
			all = append(all, x)
			for _, c := range x.Children {
				collect(c)
			}
		}
		collect(next)
		for range rng.IntN(4) {
			x := all[rng.IntN(len(all))]
			switch rng.IntN(5) {
			case 0:
				x.Title += " edited"
			case 1: // reorder children
				slices.Reverse(x.Children)
			case 2: // delete a child
				if len(x.Children) > 0 {
					x.Children = slices.Delete(x.Children, 0, 1)
				}
			case 3: // insert a new child first
				n++
				x.Children = slices.Insert(x.Children, 0, nd(fmt.Sprintf("n%d", n), 0))
			case 4: // move a child under another node outside its subtree
				if len(x.Children) > 0 && x != next {
					c := x.Children[0]
					x.Children = x.Children[1:]
					next.Children = append(next.Children, c)
				}
			}
		}
		var got []string
		for _, p := range tree.Immutability(prev, next) {
			id := p.Message[strings.Index(p.Message, "'")+1:]
			id = id[:strings.Index(id, "'")]
			kind := "changed"
			switch {
			case strings.Contains(p.Message, "missing"):
				kind = "missing"
			case strings.Contains(p.Message, "moved"):
				kind = "moved"
			}
			got = append(got, id+" "+kind)
		}
		slices.Sort(got)
		if want := immutabilityByDefinition(prev, next); !slices.Equal(got, want) {
			t.Fatalf("trial %d: Immutability = %v, by definition %v", trial, got, want)
		}
	}
}

// An agent's edits to waiting and answers are put back; a human may not
// change them; an operator (tree-edit answer) may.
func TestWaitingIsRunnerOwned(t *testing.T) {
	prev := nd("root", 0, with(nd("a", 1), func(n *tree.Node) { n.Waiting = "Which?" }),
		with(nd("b", 2), func(n *tree.Node) { n.Answers = []tree.Answer{{Question: "Q?", Answer: "A."}} }))
	next := prev.Clone()
	find(t, next, "a").Waiting = ""
	find(t, next, "b").Answers = []tree.Answer{{Question: "Q?", Answer: "Forged."}}
	notes := tree.RestoreRunnerOwned(prev, next)
	if want := []string{"root/a: waiting restored", "root/b: answers restored"}; !slices.Equal(notes, want) {
		t.Errorf("notes = %q, want %q", notes, want)
	}
	if !tree.Equal(prev, next) {
		t.Errorf("not restored:\n%s", tree.Encode(next))
	}

	answered := prev.Clone()
	a := find(t, answered, "a")
	a.Answers, a.Waiting = []tree.Answer{{Question: "Which?", Answer: "That one."}}, ""
	if ps := tree.RunnerOwnedChanges(prev, answered, tree.ByOperator, nil); len(ps) > 0 {
		t.Errorf("an operator's answer refused: %v", ps)
	}
	ps := tree.RunnerOwnedChanges(prev, answered, tree.ByHuman, nil)
	var msgs []string
	for _, p := range ps {
		msgs = append(msgs, p.Message)
	}
	want := []string{
		"answers of node 'a' changed: runner-owned fields change only through the loop or tree-edit answer",
		"waiting of node 'a' changed from true to false: runner-owned fields change only through the loop or tree-edit",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("a human's answer: %q, want %q", msgs, want)
	}
	reworded := prev.Clone()
	find(t, reworded, "a").Waiting = "Something else?"
	if ps := tree.RunnerOwnedChanges(prev, reworded, tree.ByHuman, nil); len(ps) != 1 {
		t.Errorf("a human's rewording of a question: %v", ps)
	}
	if ps := tree.RunnerOwnedChanges(prev, reworded, tree.ByLoop, nil); len(ps) != 0 {
		t.Errorf("the loop's change refused: %v", ps)
	}
}
