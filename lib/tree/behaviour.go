package tree

import (
	"fmt"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/vocab"
)

// Agent statuses (DESIGN.md decision 3).
const (
	AgentDone       = string(vocab.StatusDone)
	AgentRetry      = string(vocab.StatusRetry)
	AgentDecomposed = string(vocab.StatusDecomposed)
	// AgentBlocked: the agent needs an operator's decision; its summary
	// holds the questions, and the leaf waits for an answer.
	AgentBlocked = string(vocab.StatusBlocked)
)

// AgentStatuses lists the statuses an agent may report in mode (the
// selected leaf's next): execute done, retry or blocked, decompose
// decomposed, retry or blocked. agentout.Allowed is this; it lives here so
// that context-write can say it without linking agentout's schema
// validator.
func AgentStatuses(mode string) []string {
	if mode == NextDecompose {
		return []string{AgentDecomposed, AgentRetry, AgentBlocked}
	}
	return []string{AgentDone, AgentRetry, AgentBlocked}
}

// Immutability checks that every node passed in prev is unchanged in next:
// present, under the same parent, equal in every field and child (seed 002
// §3). Problems are sorted by node id. prev is walked depth first: a
// passed node found unchanged proves its whole subtree unchanged, so its
// descendants need no comparison of their own (the check stays linear on
// deep passed subtrees). Every passed occurrence of an id is checked, so a
// prev with duplicate ids (invalid anyway) may report an id twice.
func Immutability(prev, next *Node) Problems {
	// Problems by node id: reported in id order.
	type idProblem struct {
		id string
		p  Problem
	}
	var found []idProblem
	// Each prev node is matched to its counterpart in next by walking both
	// trees together; the index of next, for a node found elsewhere, is
	// built only when one is not where it was.
	var after map[string]liteEntry
	lookup := func(id string) (liteEntry, bool) {
		if after == nil {
			after = indexLite(next)
		}
		e, ok := after[id]
		return e, ok
	}
	pathIn := func(root *Node, id string) string { _, p := Find(root, id); return p }
	// check compares the passed node b (whose parent in prev is parent)
	// with a, its counterpart under the same parent in next, or nil when
	// next has no node b.ID there. ok reports b's subtree unchanged; a
	// problem with an empty id means b itself is unchanged and only its
	// descendants differ (they are reported, b is not).
	check := func(b, parent, a *Node) (p idProblem, ok bool) {
		id, aParent := b.ID, parent
		if a == nil {
			e, found := lookup(id)
			if !found {
				return idProblem{id, Problem{LayerImmutability, pathIn(prev, id), fmt.Sprintf("passed node '%s' missing in next tree", id)}}, false
			}
			a, aParent = e.node, e.parent
		}
		switch {
		case parentID(parent) != parentID(aParent):
			return idProblem{id, Problem{LayerImmutability, pathIn(next, id), fmt.Sprintf("passed node '%s' moved from parent '%s' to '%s'", id, parentID(parent), parentID(aParent))}}, false
		case equalUnordered(b, a):
			return idProblem{}, true
		case sameOwn(b, a):
			return idProblem{}, false
		}
		return idProblem{id, Problem{LayerImmutability, pathIn(next, id), fmt.Sprintf("passed node '%s' changed in next tree", id)}}, false
	}
	// walk checks b and, unless b is passed and unchanged, its subtree; a
	// is b's counterpart in next as for check.
	var walk func(b, parent, a *Node)
	walk = func(b, parent, a *Node) {
		if b.Passes {
			p, ok := check(b, parent, a)
			if ok {
				return // unchanged, with everything below it
			}
			if p.id != "" {
				found = append(found, p)
			}
		}
		var byID map[string]*Node // a's children by id, once one is out of place
		for i, c := range b.Children {
			var ca *Node
			if a != nil {
				if i < len(a.Children) && a.Children[i].ID == c.ID {
					ca = a.Children[i]
				} else {
					if byID == nil {
						byID = make(map[string]*Node, len(a.Children))
						for _, x := range slices.Backward(a.Children) {
							byID[x.ID] = x // the first of duplicates wins
						}
					}
					ca = byID[c.ID]
				}
			}
			walk(c, b, ca)
		}
	}
	if prev != nil {
		var a *Node
		if next != nil && next.ID == prev.ID {
			a = next
		}
		walk(prev, nil, a)
	}
	slices.SortStableFunc(found, func(x, y idProblem) int { return strings.Compare(x.id, y.id) })
	var ps Problems
	for _, f := range found {
		ps = append(ps, f.p)
	}
	return ps
}

// liteEntry is Index's Entry without the path, which costs a string per
// node; Find gives the path where a problem needs it.
type liteEntry struct {
	node, parent *Node
}

// indexLite maps every id to its first liteEntry in depth-first order, as
// Index does.
func indexLite(root *Node) map[string]liteEntry {
	m := make(map[string]liteEntry, Count(root))
	var walk func(n, parent *Node)
	walk = func(n, parent *Node) {
		if _, dup := m[n.ID]; !dup {
			m[n.ID] = liteEntry{node: n, parent: parent}
		}
		for _, c := range n.Children {
			walk(c, n)
		}
	}
	if root != nil {
		walk(root, nil)
	}
	return m
}

// equalUnordered is Equal after Sort of both, without copying the trees:
// children are compared in (order, id) order.
func equalUnordered(a, b *Node) bool {
	if !sameFields(a, b) {
		return false
	}
	// Canonical trees keep children sorted: copy and sort only when not.
	x, y := a.Children, b.Children
	if !slices.IsSortedFunc(x, compare) {
		x = slices.Clone(x)
		slices.SortStableFunc(x, compare)
	}
	if !slices.IsSortedFunc(y, compare) {
		y = slices.Clone(y)
		slices.SortStableFunc(y, compare)
	}
	for i := range x {
		if !equalUnordered(x[i], y[i]) {
			return false
		}
	}
	return true
}

// sameOwn reports whether a and b are equal in their own fields, have the
// same children by id, and equal subtrees under every child of a that has
// not passed: what differs, if anything, lies in a passed child's subtree,
// which reports it.
func sameOwn(a, b *Node) bool {
	if !sameFields(a, b) {
		return false
	}
	kids := make(map[string]*Node, len(b.Children))
	for _, c := range b.Children {
		kids[c.ID] = c
	}
	for _, c := range a.Children {
		d := kids[c.ID]
		if d == nil || (!c.Passes && !equalUnordered(c, d)) {
			return false
		}
	}
	return true
}

func parentID(n *Node) string {
	if n == nil {
		return ""
	}
	return n.ID
}

// NewNodes returns, sorted by id, the nodes of next whose ids prev lacks.
func NewNodes(prev, next *Node) []Entry {
	before := Index(prev)
	var out []Entry
	for id, e := range Index(next) {
		if _, ok := before[id]; !ok {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Node.ID, b.Node.ID) })
	return out
}

// ChildAdditions enforces seed 002 §5: the only node that may gain new
// children is the selected node, and only when status is decomposed. A
// child is new when its id does not occur anywhere in prev, so moving an open
// node is not an addition.
func ChildAdditions(prev, next *Node, selected, status string) Problems {
	var ps Problems
	for _, e := range NewNodes(prev, next) {
		parent := parentID(e.Parent)
		switch {
		case e.Parent == nil:
			ps = append(ps, Problem{LayerChildAddition, e.Path, fmt.Sprintf("root replaced by new node '%s'", e.Node.ID)})
		case parent == selected && status == AgentDecomposed:
		case parent == selected:
			ps = append(ps, Problem{LayerChildAddition, e.Path, fmt.Sprintf("node '%s' gained child '%s' but status=%s", parent, e.Node.ID, status)})
		default:
			ps = append(ps, Problem{LayerChildAddition, e.Path, fmt.Sprintf("node '%s' gained child '%s' but only the selected node '%s' may gain children", parent, e.Node.ID, selected)})
		}
	}
	return ps
}

// StatusInvariants enforces seed 002 §4 on the selected node: decomposed
// must gain children, done, retry and blocked must not.
func StatusInvariants(prev, next *Node, selected, status string) Problems {
	b, _ := Find(prev, selected)
	a, path := Find(next, selected)
	if b == nil {
		return Problems{{LayerStatus, "", fmt.Sprintf("selected node '%s' not found in previous tree", selected)}}
	}
	if a == nil {
		return Problems{{LayerStatus, "", fmt.Sprintf("selected node '%s' missing in next tree", selected)}}
	}
	np, nn := len(b.Children), len(a.Children)
	switch status {
	case AgentDecomposed:
		if nn <= np {
			return Problems{{LayerStatus, path, fmt.Sprintf("status=decomposed but selected node '%s' did not gain children (prev=%d, next=%d)", selected, np, nn)}}
		}
	case AgentDone, AgentRetry, AgentBlocked:
		if nn > np {
			return Problems{{LayerStatus, path, fmt.Sprintf("status=%s but selected node '%s' gained children (prev=%d, next=%d)", status, selected, np, nn)}}
		}
	default:
		return Problems{{LayerStatus, path, fmt.Sprintf("unknown status %q", status)}}
	}
	return nil
}

// RestoreRunnerOwned overwrites, on every node of next that also exists in
// prev, the runner-owned fields (passes, attempts, next, max_attempts,
// evidence, sent_back, waiting, answers: readOnly in the schema) with
// prev's values (003, 2026-01-17: agent edits to them are ignored). It
// returns one line per field it changed back, sorted.
func RestoreRunnerOwned(prev, next *Node) []string {
	before := Index(prev)
	var notes []string
	var walk func(n *Node, path string)
	walk = func(n *Node, path string) {
		if b, ok := before[n.ID]; ok {
			notes = restoreRunnerOwned(n, b.Node, path, notes)
		}
		for _, c := range n.Children {
			walk(c, path+"/"+c.ID)
		}
	}
	walk(next, next.ID)
	slices.Sort(notes)
	return notes
}

// CheckAgentEdits validates the tree an agent left (edited) against the
// snapshot taken before its session (prev), for the selected leaf: passed
// nodes unchanged, every open node where it was (Structure), no new nodes
// anywhere (the runner itself inserts decomposition children, DESIGN.md
// decisions 3-4), and the selected node still present, open and a leaf.
// Problems are sorted.
func CheckAgentEdits(prev, edited *Node, selected string) Problems {
	ps := Immutability(prev, edited)
	for _, p := range Structure(prev, edited) {
		// A missing selected node is reported once, below.
		if !strings.HasPrefix(p.Message, "open node '"+selected+"' missing") {
			ps = append(ps, p)
		}
	}
	for _, e := range NewNodes(prev, edited) {
		ps = append(ps, Problem{LayerChildAddition, e.Path, fmt.Sprintf("node '%s' added by the agent; only the runner adds children, from a decomposed output", e.Node.ID)})
	}
	n, path := Find(edited, selected)
	switch {
	case n == nil:
		ps = append(ps, Problem{LayerStatus, "", fmt.Sprintf("selected node '%s' missing in next tree", selected)})
	case !n.IsLeaf():
		ps = append(ps, Problem{LayerStatus, path, fmt.Sprintf("selected node '%s' gained children (prev=0, next=%d)", selected, len(n.Children))})
	}
	return ps.Sorted()
}

// Structure checks that every open node of prev is still in next, under
// the same parent and with the same order: an agent may edit an
// open node's title, goal and acceptance (DESIGN.md decision 4), but no
// node disappears or moves except through a decomposition the runner
// applies, which only adds. Passed nodes are Immutability's. Problems are
// in prev's depth-first order.
func Structure(prev, next *Node) Problems {
	if prev == nil || next == nil {
		return nil
	}
	after := indexLite(next)
	var ps Problems
	var walk func(b, parent *Node, path string)
	walk = func(b, parent *Node, path string) {
		if !b.Passes {
			e, ok := after[b.ID]
			switch {
			case !ok:
				ps = append(ps, Problem{LayerImmutability, path, fmt.Sprintf("open node '%s' missing in next tree: only a decomposition changes the tree's shape", b.ID)})
			case parentID(parent) != parentID(e.parent):
				ps = append(ps, Problem{LayerImmutability, path, fmt.Sprintf("open node '%s' moved from parent '%s' to '%s'", b.ID, parentID(parent), parentID(e.parent))})
			case b.Order != e.node.Order:
				ps = append(ps, Problem{LayerImmutability, path, fmt.Sprintf("open node '%s' moved: order %d changed to %d", b.ID, b.Order, e.node.Order)})
			}
		}
		for _, c := range b.Children {
			walk(c, b, path+"/"+c.ID)
		}
	}
	walk(prev, nil, prev.ID)
	return ps
}

// Changer is who changes a tree, for RunnerOwnedChanges (DESIGN.md
// decision 16).
type Changer string

// The changers: a human (the default: no runner-owned change), an operator
// through tree-edit, the loop's own commit (transitions tree-update has
// already judged).
const (
	ByHuman    Changer = "human"
	ByOperator Changer = "operator"
	ByLoop     Changer = "loop"
)

// LayerRunnerOwned reports a change to a runner-owned field that the
// changer may not make.
const LayerRunnerOwned = "runner-owned"

// RunnerOwnedChanges checks next's runner-owned fields (passes, attempts,
// max_attempts, next, evidence, sent_back, waiting, answers) against prev's for what by may
// change (DESIGN.md decision 16): a human nothing; an operator attempts,
// max_attempts, next, evidence, waiting and answers of open nodes, and the pass of
// an inner node all of whose children pass (derived: it removed or moved
// away the last open one); the loop everything (tree-update judged it).
// Otherwise passes never becomes true here, a new node included: only a
// green guard passes a node. Nodes in skip (the selected node and its ancestors
// of a step being judged) are left to the step's checks. Passed nodes of
// prev are Immutability's to report. Problems are sorted.
func RunnerOwnedChanges(prev, next *Node, by Changer, skip map[string]bool) Problems {
	if by == ByLoop || prev == nil || next == nil {
		return nil
	}
	before := indexLite(prev)
	var ps Problems
	var walk func(n *Node, path string)
	walk = func(n *Node, path string) {
		e, existed := before[n.ID]
		switch {
		case skip[n.ID]:
		case !existed:
			if n.Passes {
				ps = append(ps, Problem{LayerRunnerOwned, path, fmt.Sprintf("new node '%s' has passes=true: only a green guard passes a node", n.ID)})
			}
			if by != ByOperator && (n.Waiting != "" || len(n.Answers) > 0 || n.SentBack) {
				ps = append(ps, Problem{LayerRunnerOwned, path, fmt.Sprintf("new node '%s' has waiting, answers or sent_back: runner-owned fields change only through the loop or tree-edit", n.ID)})
			}
			if by != ByOperator && n.Evidence != "" && n.Evidence != EvidenceProposedSuite {
				ps = append(ps, Problem{LayerRunnerOwned, path, fmt.Sprintf("new node '%s' has evidence %q: only an operator sets a node's evidence (an agent proposes suite)", n.ID, n.Evidence)})
			}
		case e.node.Passes:
			// Immutability reports any change to a passed node.
		default:
			p := e.node
			if n.Passes && !(by == ByOperator && derived(n)) {
				ps = append(ps, Problem{LayerRunnerOwned, path, fmt.Sprintf("passes of open node '%s' changed to true: only a green guard passes a node", n.ID)})
			}
			if by != ByOperator {
				for _, f := range [...]struct {
					name    string
					was, is any
				}{
					{"attempts", p.Attempts, n.Attempts},
					{"max_attempts", p.MaxAttempts, n.MaxAttempts},
					{"next", p.Next, n.Next},
					{"evidence", p.Evidence, n.Evidence},
					{"sent_back", p.SentBack, n.SentBack},
					{"waiting", p.Waiting != "", n.Waiting != ""},
				} {
					if f.was != f.is {
						ps = append(ps, Problem{LayerRunnerOwned, path, fmt.Sprintf("%s of node '%s' changed from %v to %v: runner-owned fields change only through the loop or tree-edit", f.name, n.ID, f.was, f.is)})
					}
				}
				if p.Waiting != n.Waiting && p.Waiting != "" && n.Waiting != "" {
					ps = append(ps, Problem{LayerRunnerOwned, path, fmt.Sprintf("waiting of node '%s' changed: runner-owned fields change only through the loop or tree-edit", n.ID)})
				}
				if !slices.Equal(p.Answers, n.Answers) {
					ps = append(ps, Problem{LayerRunnerOwned, path, fmt.Sprintf("answers of node '%s' changed: runner-owned fields change only through the loop or tree-edit answer", n.ID)})
				}
			}
		}
		for _, c := range n.Children {
			walk(c, path+"/"+c.ID)
		}
	}
	walk(next, next.ID)
	return ps.Sorted()
}

// derived reports an inner node all of whose children pass: its pass
// comes from theirs (DerivePasses), as when an operator removes or moves
// away its last open child.
func derived(n *Node) bool {
	if n.IsLeaf() {
		return false
	}
	for _, c := range n.Children {
		if !c.Passes {
			return false
		}
	}
	return true
}

// SelectedAndAncestors is the skip set of RunnerOwnedChanges for a step
// on the selected node of tree: the node whose transition the step makes
// and the ancestors whose passes it derives.
func SelectedAndAncestors(tree *Node, selected string) map[string]bool {
	_, path := Find(tree, selected)
	if path == "" {
		return nil
	}
	skip := map[string]bool{}
	for _, id := range strings.Split(path, "/") {
		skip[id] = true
	}
	return skip
}
