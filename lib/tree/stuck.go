package tree

import (
	"fmt"
	"strings"

	"github.com/treeloop/treeloop/lib/vocab"
)

// StuckPolicy is what the loop does with a leaf that has used all its
// attempts (config.toml's stuck_policy, DESIGN.md decision 7).
type StuckPolicy string

// The stuck policies.
const (
	// StuckStop: the run ends stuck at the first leaf selection reaches
	// with no attempts left (003: a hard stop). The default.
	StuckStop StuckPolicy = "stop"
	// StuckSkip: selection passes over the leaves with no attempts left
	// and the loop goes on with the next one it can work; the run ends
	// stuck once no leaf is left but stuck ones (SelectWith).
	StuckSkip StuckPolicy = "skip"
	// StuckDecompose: the transition that uses up a leaf's attempts
	// sends it back to the agent once in decompose mode (SendBack, seed
	// 001 §12); a leaf sent back before stops the run as under StuckStop.
	StuckDecompose StuckPolicy = "decompose"
)

// StuckPolicies are the stuck policies, the default first.
var StuckPolicies = []StuckPolicy{StuckStop, StuckSkip, StuckDecompose}

// exhausted reports whether the leaf n has no attempts left.
func exhausted(n *Node) bool { return n.Attempts >= n.MaxAttempts }

// Stuck lists the open leaves with no attempts left (attempts =
// max_attempts), in selection order (depth first, siblings by (order,
// id)), each with its path: every leaf a run under StuckSkip passed over.
func Stuck(root *Node) []Entry {
	return openWhere(root, func(n *Node) bool { return n.IsLeaf() && exhausted(n) })
}

// SendBack applies the stuck policy p to the leaf id of t once its
// transition is made (seed 001 §12, attempt exhaustion): under
// StuckDecompose an open leaf that does not wait, has used all its
// attempts and was never sent back goes back to the agent once in
// decompose mode, to be split into smaller children or rewritten as one:
// next=decompose, max_attempts one more (that one session), sent_back.
// Its attempts stay as they were, the count of sessions it had. A leaf
// sent back before, one whose max_attempts is MaxAttemptsLimit already,
// and every leaf under another policy are left as they are (stuck).
// SendBack reports whether it sent the leaf back.
func SendBack(t *Node, id string, p StuckPolicy) bool {
	if p != StuckDecompose {
		return false
	}
	n, _ := Find(t, id)
	if n == nil || !n.IsLeaf() || n.Passes || n.IsWaiting() || !exhausted(n) || n.SentBack || n.MaxAttempts >= MaxAttemptsLimit {
		return false
	}
	n.Next, n.MaxAttempts, n.SentBack = NextDecompose, n.MaxAttempts+1, true
	return true
}

// StuckHint is the next step for a stuck node (a Selection with status
// stuck), as the stuck messages of tree-select, runner-step and
// runner-status give it: the operator edits that free it.
func StuckHint(id string) string {
	return "give it more with tree-edit retry " + id + " [--attempts N], or split it with tree-edit decompose " + id
}

// StuckList says which leaves Stuck listed, for the stuck messages of
// tree-select and runner-status: "2 stuck leaves: 'a' at root/a (3/3),
// 'c' at root/c (3/3)".
func StuckList(stuck []Entry) string {
	parts := make([]string, len(stuck))
	for i, e := range stuck {
		parts[i] = fmt.Sprintf("'%s' at %s (%d/%d)", e.Node.ID, e.Path, e.Node.Attempts, e.Node.MaxAttempts)
	}
	return vocab.Plural(len(stuck), "stuck leaf", "stuck leaves") + ": " + strings.Join(parts, ", ")
}
