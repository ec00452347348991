package tree

import "unicode/utf8"

// Verify returns what Load(data) would return as problems, where data is
// Encode(root) (root as Encode left it: sorted, normalized), without
// parsing data again: a writer that checks its own output before writing
// it (tree-update) saves a whole load (issue 16). A tree within every
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
	switch {
	case depth > fastMaxDepth,
		!ValidID(n.ID),
		n.Order < -maxOrder || n.Order > maxOrder,
		n.Title == "" || utf8.RuneCountInString(n.Title) > maxTitleRunes,
		utf8.RuneCountInString(n.Goal) > maxGoalRunes,
		len(n.Acceptance) > maxAcceptance,
		n.Next != NextExecute && n.Next != NextDecompose,
		n.Attempts < 0 || n.Attempts > maxAttemptsValue,
		n.MaxAttempts < 0 || n.MaxAttempts > maxAttemptsValue,
		len(n.Children) > maxChildren,
		utf8.RuneCountInString(n.Waiting) > maxGoalRunes,
		len(n.Answers) > MaxAnswers:
		return false
	}
	for _, a := range n.Acceptance {
		if utf8.RuneCountInString(a) > maxCriterionRunes {
			return false
		}
	}
	for _, a := range n.Answers {
		if a.Question == "" || a.Answer == "" || utf8.RuneCountInString(a.Question) > maxGoalRunes || utf8.RuneCountInString(a.Answer) > maxGoalRunes {
			return false
		}
	}
	for _, c := range n.Children {
		if !withinBounds(c, depth+1) {
			return false
		}
	}
	return true
}
