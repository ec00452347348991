package tree_test

import (
	"slices"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

func TestSelect(t *testing.T) {
	stuck := func(n *tree.Node) *tree.Node { n.Attempts = n.MaxAttempts; return n }
	waits := func(n *tree.Node) *tree.Node { n.Waiting = "Which one?"; return n }
	tests := []struct {
		name string
		root *tree.Node
		want string // Selection.String()
		path string
	}{
		{"single open root", nd("root", 0),
			"status=open id=root path=root next=execute attempts=0/3", "root"},
		{"first child by order", nd("root", 0, nd("a", 1), nd("b", 2)),
			"status=open id=a path=root/a next=execute attempts=0/3", "root/a"},
		{"order before id", nd("root", 0, nd("a", 2), nd("b", 1)),
			"status=open id=b path=root/b next=execute attempts=0/3", "root/b"},
		{"id breaks an order tie", nd("root", 0, nd("b", 1), nd("a", 1)),
			"status=open id=a path=root/a next=execute attempts=0/3", "root/a"},
		{"ids compare by bytes", nd("root", 0, nd("a", 1), nd("B", 1)),
			"status=open id=B path=root/B next=execute attempts=0/3", "root/B"},
		{"orders compare as numbers", nd("root", 0, nd("a", 10), nd("b", 9)),
			"status=open id=b path=root/b next=execute attempts=0/3", "root/b"},
		{"negative order first", nd("root", 0, nd("a", 0), nd("b", -1)),
			"status=open id=b path=root/b next=execute attempts=0/3", "root/b"},
		{"depth first", nd("root", 0, nd("a", 1, nd("a1", 1, nd("deep", 1))), nd("b", 2)),
			"status=open id=deep path=root/a/a1/deep next=execute attempts=0/3", "root/a/a1/deep"},
		{"passed subtree skipped", nd("root", 0, passed(nd("a", 1, passed(nd("a1", 1)))), nd("b", 2, passed(nd("b1", 1)), nd("b2", 2))),
			"status=open id=b2 path=root/b/b2 next=execute attempts=0/3", "root/b/b2"},
		{"passed leaf skipped", nd("root", 0, passed(nd("a", 1)), nd("b", 2)),
			"status=open id=b path=root/b next=execute attempts=0/3", "root/b"},
		{"open internal node whose children all passed is skipped", nd("root", 0, nd("a", 1, passed(nd("a1", 1))), nd("c", 2)),
			"status=open id=c path=root/c next=execute attempts=0/3", "root/c"},
		{"unsorted storage visited in (order,id) order", nd("root", 0, nd("z", 3), nd("y", 1, nd("y2", 2), nd("y1", 1)), nd("x", 2)),
			"status=open id=y1 path=root/y/y1 next=execute attempts=0/3", "root/y/y1"},
		{"unsorted storage with tie", nd("root", 0, nd("m", 5), nd("k", 5), nd("q", 7)),
			"status=open id=k path=root/k next=execute attempts=0/3", "root/k"},
		{"next and attempts shown", nd("root", 0, with(nd("a", 1), func(n *tree.Node) { n.Next = tree.NextDecompose; n.Attempts = 2; n.MaxAttempts = 5 })),
			"status=open id=a path=root/a next=decompose attempts=2/5", "root/a"},
		{"stuck when attempts == max_attempts", nd("root", 0, stuck(nd("a", 1)), nd("b", 2)),
			"status=stuck id=a path=root/a next=execute attempts=3/3", "root/a"},
		{"stuck root leaf", with(nd("root", 0), func(n *tree.Node) { n.Attempts, n.MaxAttempts = 1, 1 }),
			"status=stuck id=root path=root next=execute attempts=1/1", "root"},
		{"one attempt left is open", nd("root", 0, with(nd("a", 1), func(n *tree.Node) { n.Attempts = 2 })),
			"status=open id=a path=root/a next=execute attempts=2/3", "root/a"},
		{"stuck leaf after a passed one", nd("root", 0, passed(nd("a", 1)), stuck(nd("b", 2)), nd("c", 3)),
			"status=stuck id=b path=root/b next=execute attempts=3/3", "root/b"},
		{"complete when root passed", passed(nd("root", 0, passed(nd("a", 1)))),
			"status=complete", ""},
		{"complete when root passed even with an open child", passed(nd("root", 0, nd("a", 1))),
			"status=complete", ""},
		{"complete when no open leaf", nd("root", 0, passed(nd("a", 1)), nd("b", 2, passed(nd("b1", 1)))),
			"status=complete", ""},
		{"complete for nil", nil, "status=complete", ""},
		{"waiting leaf skipped", nd("root", 0, waits(nd("a", 1)), nd("b", 2)),
			"status=open id=b path=root/b next=execute attempts=0/3", "root/b"},
		{"waiting leaf skipped in a subtree", nd("root", 0, nd("a", 1, waits(nd("a1", 1)), nd("a2", 2)), nd("b", 2)),
			"status=open id=a2 path=root/a/a2 next=execute attempts=0/3", "root/a/a2"},
		{"stuck leaf after a waiting one", nd("root", 0, waits(nd("a", 1)), stuck(nd("b", 2))),
			"status=stuck id=b path=root/b next=execute attempts=3/3", "root/b"},
		{"a waiting stuck leaf is skipped", nd("root", 0, waits(stuck(nd("a", 1))), nd("b", 2)),
			"status=open id=b path=root/b next=execute attempts=0/3", "root/b"},
		{"waiting when every open leaf waits, naming the leftmost", nd("root", 0, passed(nd("a", 1)), nd("b", 2, waits(nd("b2", 2)), waits(nd("b1", 1))), waits(nd("c", 3))),
			"status=waiting id=b1 path=root/b/b1 next=execute attempts=0/3", "root/b/b1"},
		{"a waiting root leaf", waits(nd("root", 0)),
			"status=waiting id=root path=root next=execute attempts=0/3", "root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *tree.Node
			if tt.root != nil {
				before = tt.root.Clone()
			}
			s := tree.Select(tt.root)
			if got := s.String(); got != tt.want {
				t.Errorf("Select = %q, want %q", got, tt.want)
			}
			if s.Path != tt.path {
				t.Errorf("Path = %q, want %q", s.Path, tt.path)
			}
			switch s.Status {
			case tree.StatusComplete:
				if s.Node != nil {
					t.Errorf("complete selection has a node")
				}
			default:
				n, path := tree.Find(tt.root, s.Node.ID)
				if n != s.Node || path != s.Path {
					t.Errorf("Node is not the tree's node at %s", s.Path)
				}
			}
			if tt.root != nil && !tree.Equal(tt.root, before) {
				t.Errorf("Select modified the tree (stored order must stay)")
			}
		})
	}
}

func TestSelectionString(t *testing.T) {
	n := &tree.Node{ID: "auth", Next: tree.NextExecute, Attempts: 0, MaxAttempts: 3}
	tests := []struct {
		s    tree.Selection
		want string
	}{
		{tree.Selection{Status: tree.StatusOpen, Node: n, Path: "root/backend/auth"}, "status=open id=auth path=root/backend/auth next=execute attempts=0/3"},
		{tree.Selection{Status: tree.StatusStuck, Node: n, Path: "root/backend/auth"}, "status=stuck id=auth path=root/backend/auth next=execute attempts=0/3"},
		{tree.Selection{Status: tree.StatusComplete}, "status=complete"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// Waiting lists every waiting leaf in selection order, with its path.
func TestWaiting(t *testing.T) {
	waits := func(n *tree.Node, q string) *tree.Node { n.Waiting = q; return n }
	root := nd("root", 0, nd("z", 3, waits(nd("z1", 1), "Z?")), nd("a", 1, nd("a2", 2), waits(nd("a1", 1), "A?")), passed(nd("p", 2)))
	var got []string
	for _, e := range tree.Waiting(root) {
		got = append(got, e.Path+" "+e.Node.Waiting)
	}
	if want := []string{"root/a/a1 A?", "root/z/z1 Z?"}; !slices.Equal(got, want) {
		t.Errorf("Waiting = %q, want %q", got, want)
	}
	if w := tree.Waiting(nd("root", 0)); len(w) != 0 {
		t.Errorf("Waiting of a tree without questions = %v", w)
	}
}
