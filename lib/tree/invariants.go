package tree

import "fmt"

// Check returns the semantic invariant problems of seed 002 §2, all of them,
// sorted: unique ids, max_attempts > 0, attempts <= max_attempts, children
// sorted by (order, id), plus a passed node may have no open child (passes
// of internal nodes are derived from their children).
func Check(root *Node) Problems {
	var ps Problems
	seen := map[string]string{}
	var walk func(n *Node, path string)
	walk = func(n *Node, path string) {
		if first, dup := seen[n.ID]; dup && first == path {
			ps = append(ps, Problem{LayerInvariant, path, fmt.Sprintf("duplicate id '%s' (two siblings)", n.ID)})
		} else if dup {
			ps = append(ps, Problem{LayerInvariant, path, fmt.Sprintf("duplicate id '%s' (first at %s)", n.ID, first)})
		} else {
			seen[n.ID] = path
		}
		if n.MaxAttempts <= 0 {
			ps = append(ps, Problem{LayerInvariant, path, "max_attempts must be > 0"})
		}
		if n.Attempts > n.MaxAttempts {
			ps = append(ps, Problem{LayerInvariant, path, fmt.Sprintf("attempts %d exceeds max_attempts %d", n.Attempts, n.MaxAttempts)})
		}
		for i := 1; i < len(n.Children); i++ {
			if !Less(n.Children[i-1], n.Children[i]) {
				ps = append(ps, Problem{LayerInvariant, path, "children must be sorted by (order,id)"})
				break
			}
		}
		for _, c := range n.Children {
			if n.Passes && !c.Passes {
				ps = append(ps, Problem{LayerInvariant, path, fmt.Sprintf("passes=true but child '%s' is open", c.ID)})
			}
		}
		for _, c := range n.Children {
			walk(c, path+"/"+c.ID)
		}
	}
	walk(root, root.ID)
	return ps.Sorted()
}
