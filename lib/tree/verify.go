package tree

import (
	"unicode/utf8"

	"github.com/treeloop/treeloop/lib/schema"
)

// Verify returns what Load(data) would return as problems, where data is
// Encode(root) (root as Encode left it: sorted, normalized), without
// parsing data again: a writer that checks its own output before writing
// it (tree-update) saves a whole load. A tree within every
// bound the fast path checks (schema limits, nesting) encodes to bytes
// the fast path reads back as an equal tree (FuzzFastParse, and
// TestEncodeMatchesEncodingJSON for the encoding), so Load's problems are
// Check(root)'s; any other tree is loaded from data, and its problems are
// Load's own words.
//
// With ShareLoads on, a later Load of data gets a copy of root (and
// these problems) when root is the tree the load would build: every
// string valid UTF-8 (an invalid byte is written as U+FFFD), so that the
// bytes read back give root's very strings.
func Verify(root *Node, data []byte) Problems {
	if root == nil || !withinBounds(root, 0) {
		_, ps := Load(data)
		return ps
	}
	ps := Check(root)
	if sharing.Load() && validUTF8(root) {
		share(data, root, ps)
	}
	return ps
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

// validUTF8 reports whether every string of the tree at n is valid UTF-8.
func validUTF8(n *Node) bool {
	if !utf8.ValidString(n.ID) || !utf8.ValidString(n.Title) || !utf8.ValidString(n.Goal) ||
		!utf8.ValidString(n.Next) || !utf8.ValidString(n.Evidence) || !utf8.ValidString(n.Waiting) {
		return false
	}
	for _, a := range n.Acceptance {
		if !utf8.ValidString(a) {
			return false
		}
	}
	for _, a := range n.Answers {
		if !utf8.ValidString(a.Question) || !utf8.ValidString(a.Answer) {
			return false
		}
	}
	for _, c := range n.Children {
		if !validUTF8(c) {
			return false
		}
	}
	return true
}
