package tree

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
)

// Less orders siblings by (order ASC, id ASC), the tie-break of seed 000 §4.2.
func Less(a, b *Node) bool { return compare(a, b) < 0 }

func compare(a, b *Node) int {
	if c := cmp.Compare(a.Order, b.Order); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Sort sorts every children array in the tree by (order, id), in place.
func Sort(n *Node) {
	slices.SortStableFunc(n.Children, compare)
	for _, c := range n.Children {
		Sort(c)
	}
}

// normalize makes nil slices empty so they encode as [] rather than null.
func normalize(n *Node) {
	if n.Acceptance == nil {
		n.Acceptance = []string{}
	}
	if n.Children == nil {
		n.Children = []*Node{}
	}
	for _, c := range n.Children {
		normalize(c)
	}
}

// Encode returns the canonical bytes of the tree (DESIGN.md decision 9):
// children sorted by (order, id), keys in schema order, 2-space indent, no
// HTML escaping, a trailing newline. It sorts and normalizes n in place.
func Encode(n *Node) []byte {
	Sort(n)
	normalize(n)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(n); err != nil {
		panic("tree: encode: " + err.Error()) // a Node always encodes
	}
	return buf.Bytes()
}

// IsCanonical reports whether data is exactly the canonical encoding of root.
func IsCanonical(data []byte, root *Node) bool {
	return bytes.Equal(data, Encode(root.Clone()))
}
