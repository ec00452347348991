package tree

import "github.com/treeloop/treeloop/lib/schema"

// Verify returns what Load(data) would return as problems, where data is
// Encode(root) (root as Encode left it: sorted, normalized), without
// parsing data again: a writer that checks its own output before writing
// it (tree-update) saves a whole load. A tree within every
// bound the fast path checks (schema limits, nesting) encodes to bytes
// the fast path reads back as an equal tree (FuzzFastParse, and
// TestEncodeMatchesEncodingJSON for the encoding), so Load's problems are
// Check(root)'s; any other tree is loaded from data, and its problems are
// Load's own words.
func Verify(root *Node, data []byte) Problems {
	if root == nil || !withinBounds(root, 0) {
		_, ps := Load(data)
		return ps
	}
	return Check(root)
}

// withinBounds reports whether every node of the subtree at n, n at
// nesting depth, satisfies what fastParse checks of a node: the id
// pattern, the schema's bounds on numbers, string lengths (code points,
// an invalid byte counting as the one U+FFFD it is encoded as) and item
// counts, next's values, and nesting within fastMaxDepth.
func withinBounds(n *Node, depth int) bool {
	if depth > fastMaxDepth || !nodeWithinBounds(n) {
		return false
	}
	for _, c := range n.Children {
		if !withinBounds(c, depth+1) {
			return false
		}
	}
	return true
}

// allRunes reports whether every string of ss has at most maxRunes code
// points.
func allRunes(ss []string, maxRunes int) bool {
	for _, s := range ss {
		if !schema.Runes(s, 0, maxRunes) {
			return false
		}
	}
	return true
}
