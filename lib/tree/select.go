package tree

import (
	"fmt"
	"slices"

	"github.com/treeloop/treeloop/lib/vocab"
)

// Selection states reported by Select.
const (
	StatusOpen     = string(vocab.NodeOpen)    // an open leaf with attempts left
	StatusComplete = "complete"                // no open leaf remains
	StatusStuck    = string(vocab.NodeStuck)   // the leaf selected has attempts == max_attempts (SelectWith)
	StatusWaiting  = string(vocab.NodeWaiting) // every open leaf waits for an operator's answer
)

// Selection is the result of Select. Node and Path are set unless the tree is
// complete.
type Selection struct {
	Status string
	Node   *Node
	Path   string
}

// String renders the selection in tree-select's text form, e.g.
// "status=open id=auth path=root/backend/auth next=execute attempts=0/3".
// Every value matches [A-Za-z0-9._/-], so the line is safe for eval.
func (s Selection) String() string {
	if s.Node == nil {
		return "status=" + s.Status
	}
	return fmt.Sprintf("status=%s id=%s path=%s next=%s attempts=%d/%d",
		s.Status, s.Node.ID, s.Path, s.Node.Next, s.Node.Attempts, s.Node.MaxAttempts)
}

// Select finds the leftmost open leaf: depth-first, siblings visited by
// (order ASC, id ASC) whatever their stored order, passed subtrees skipped
// (seed 000 §4.2), and leaves that wait for an operator's answer skipped
// too (DESIGN.md decision 3). A leaf whose attempts reached max_attempts
// makes the selection stuck (003: stuck is a hard stop, decided by the
// runner). When every open leaf waits, the selection is waiting and names
// the leftmost of them. Select is SelectWith under StuckStop.
func Select(root *Node) Selection { return SelectWith(root, StuckStop) }

// SelectWith is Select under the stuck policy p (DESIGN.md decision 7).
// StuckStop and StuckDecompose select as Select: the leftmost open leaf,
// stuck when it has no attempts left (decompose sends a leaf back at the
// transition that exhausts it, SendBack, so selection finds it open
// again). StuckSkip passes over a leaf with no attempts left as it passes
// over a waiting one, and the selection is stuck only when no leaf is left
// to work: none open and none waiting; it then names the leftmost stuck
// leaf (Stuck lists them all).
func SelectWith(root *Node, p StuckPolicy) Selection {
	var path, waitPath, stuckPath []string
	var found, waiting, stuck *Node
	var walk func(n *Node) bool
	walk = func(n *Node) bool {
		if n.Passes {
			return false
		}
		path = append(path, n.ID)
		if n.IsLeaf() {
			switch {
			case n.IsWaiting():
				if waiting == nil {
					waiting, waitPath = n, slices.Clone(path)
				}
			case p == StuckSkip && exhausted(n):
				if stuck == nil {
					stuck, stuckPath = n, slices.Clone(path)
				}
			default:
				found = n
				return true
			}
			path = path[:len(path)-1]
			return false
		}
		kids := n.Children
		if !slices.IsSortedFunc(kids, compare) {
			kids = slices.SortedStableFunc(slices.Values(kids), compare)
		}
		for _, c := range kids {
			if walk(c) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if root == nil || !walk(root) {
		switch {
		case waiting != nil:
			return Selection{Status: StatusWaiting, Node: waiting, Path: joinPath(waitPath)}
		case stuck != nil:
			return Selection{Status: StatusStuck, Node: stuck, Path: joinPath(stuckPath)}
		}
		return Selection{Status: StatusComplete}
	}
	s := Selection{Status: StatusOpen, Node: found, Path: joinPath(path)}
	if exhausted(found) {
		s.Status = StatusStuck
	}
	return s
}

// AnswerHint is the operator's next step for a waiting leaf, as the
// waiting messages of tree-select, runner-step and runner-status give it.
func AnswerHint(id string) string {
	return "read its question with runner-status, answer with tree-edit answer " + id + " TEXT (or --file FILE)"
}

// Waiting lists the leaves that wait for an operator's answer, in
// selection order (depth first, siblings by (order, id)), each with its
// path: the open questions of the run.
func Waiting(root *Node) []Entry {
	return openWhere(root, (*Node).IsWaiting)
}

// openWhere lists the nodes of no passed subtree for which match holds,
// in selection order (depth first, siblings by (order, id)), each with
// its parent and path.
func openWhere(root *Node, match func(*Node) bool) []Entry {
	var out []Entry
	var walk func(n, parent *Node, path string)
	walk = func(n, parent *Node, path string) {
		if n.Passes {
			return
		}
		if match(n) {
			out = append(out, Entry{Node: n, Parent: parent, Path: path})
		}
		kids := n.Children
		if !slices.IsSortedFunc(kids, compare) {
			kids = slices.SortedStableFunc(slices.Values(kids), compare)
		}
		for _, c := range kids {
			walk(c, n, path+"/"+c.ID)
		}
	}
	if root != nil {
		walk(root, nil, root.ID)
	}
	return out
}

func joinPath(ids []string) string {
	n := 0
	for _, id := range ids {
		n += len(id) + 1
	}
	b := make([]byte, 0, n)
	for i, id := range ids {
		if i > 0 {
			b = append(b, '/')
		}
		b = append(b, id...)
	}
	return string(b)
}
