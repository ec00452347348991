package tree

import (
	"fmt"
	"strings"
)

// Check returns the semantic invariant problems of seed 002 §2, all of them,
// sorted: unique ids, max_attempts > 0, attempts <= max_attempts, children
// sorted by (order, id), plus a passed node may have no open child (passes
// of internal nodes are derived from their children), only an open leaf
// waits for an answer, and no title, goal or acceptance line holds a
// control character (ControlChar).
func Check(root *Node) Problems {
	var ps Problems
	// Paths are built only for problems: a valid tree of any size costs one
	// map entry per node and no strings.
	seen := make(map[string]bool, Count(root))
	stack := make([]string, 0, 16)
	at := func() string { return strings.Join(stack, "/") }
	var walk func(n *Node)
	walk = func(n *Node) {
		stack = append(stack, n.ID)
		if seen[n.ID] {
			path := at()
			if _, first := Find(root, n.ID); first == path {
				ps = append(ps, Problem{LayerInvariant, path, fmt.Sprintf("duplicate id '%s' (two siblings)", n.ID)})
			} else {
				ps = append(ps, Problem{LayerInvariant, path, fmt.Sprintf("duplicate id '%s' (first at %s)", n.ID, first)})
			}
		} else {
			seen[n.ID] = true
		}
		if n.MaxAttempts <= 0 {
			ps = append(ps, Problem{LayerInvariant, at(), "max_attempts must be > 0"})
		}
		if n.Attempts > n.MaxAttempts {
			ps = append(ps, Problem{LayerInvariant, at(), fmt.Sprintf("attempts %d exceeds max_attempts %d", n.Attempts, n.MaxAttempts)})
		}
		for _, m := range textProblems(n) {
			ps = append(ps, Problem{LayerInvariant, at(), m})
		}
		for i := 1; i < len(n.Children); i++ {
			if !Less(n.Children[i-1], n.Children[i]) {
				ps = append(ps, Problem{LayerInvariant, at(), "children must be sorted by (order,id)"})
				break
			}
		}
		if n.Waiting != "" && (n.Passes || !n.IsLeaf()) {
			ps = append(ps, Problem{LayerInvariant, at(), "only an open leaf waits for an answer (waiting set on a passed node or a node with children)"})
		}
		for _, c := range n.Children {
			if n.Passes && !c.Passes {
				ps = append(ps, Problem{LayerInvariant, at(), fmt.Sprintf("passes=true but child '%s' is open", c.ID)})
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
		stack = stack[:len(stack)-1]
	}
	walk(root)
	return ps.Sorted()
}
