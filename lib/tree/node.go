// Package tree is the task tree model (seeds 000 §4 and 002): the node type,
// strict loading, canonical encoding, leftmost-open-leaf selection, semantic
// invariants, behavioural checks between two trees and the runner-owned
// transitions (003, 2026-01-17). Everything here is pure: no file, process or
// clock access.
package tree

import (
	"strings"

	"github.com/treeloop/treeloop/lib/schema"
)

// Values of Node.Next: how the agent works a leaf (DESIGN.md decision 2).
const (
	NextExecute   = "execute"
	NextDecompose = "decompose"
)

// Values of Node.Evidence (DESIGN.md decision 24).
const (
	EvidenceWitness       = "witness"        // a test the node added or changed fails without its work
	EvidenceSuite         = "suite"          // the suite alone, as the operator set it
	EvidenceProposedSuite = "proposed-suite" // the suite alone, as the agent that created the node proposed
)

// IDPattern is the node id pattern (DESIGN.md decision 8), as written in
// the schema; ValidID checks it. (A compiled regexp of it would unroll the
// counted repetition at every command's start-up: schema.Matchers.)
const IDPattern = schema.IDPattern

// MaxIDLen is the longest id IDPattern admits.
const MaxIDLen = 128

// Node is one task tree node, its fields in schema order (the canonical key
// order). passes, attempts, next, max_attempts, evidence, sent_back, waiting
// and answers are runner-owned on existing nodes (readOnly in the schema:
// nodeFields).
type Node struct {
	ID          string   `json:"id"`
	Order       int64    `json:"order"`
	Title       string   `json:"title"`
	Goal        string   `json:"goal"`
	Acceptance  []string `json:"acceptance"`
	Next        string   `json:"next"`
	Passes      bool     `json:"passes"`
	Attempts    int      `json:"attempts"`
	MaxAttempts int      `json:"max_attempts"`
	// Evidence is what the leaf needs to pass beside a green guard
	// (DESIGN.md decision 24): EvidenceWitness, EvidenceSuite or
	// EvidenceProposedSuite; "" (absent from the file) leaves it to the
	// configuration.
	Evidence string `json:"evidence,omitempty"`
	// SentBack is set once the leaf used all its attempts and went back
	// to the agent in decompose mode (SendBack, stuck policy decompose);
	// false is absent from the file.
	SentBack bool `json:"sent_back,omitempty"`
	// Waiting is the question an open leaf waits on (an agent's blocked
	// summary, DESIGN.md decision 3); "" when it does not wait, and then
	// absent from the file.
	Waiting string `json:"waiting,omitempty"`
	// Answers are the operator's answers to the node's earlier questions,
	// oldest first (tree-edit answer); absent from the file when none.
	Answers  []Answer `json:"answers,omitempty"`
	Children []*Node  `json:"children"`
}

// Answer is one question of a node and the operator's answer to it.
type Answer struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
}

// MaxAnswers is the schema's bound on a node's answers: a node that has
// had this many questions answered may ask no more.
const MaxAnswers = nodeAnswersMaxItems

// IsWaiting reports whether n waits for an operator's answer.
func (n *Node) IsWaiting() bool { return n.Waiting != "" }

// IsLeaf reports whether n has no children.
func (n *Node) IsLeaf() bool { return len(n.Children) == 0 }

// AnyPassed reports whether a node of the tree rooted at n has passed;
// false for a nil tree.
func AnyPassed(n *Node) bool {
	if n == nil {
		return false
	}
	if n.Passes {
		return true
	}
	for _, c := range n.Children {
		if AnyPassed(c) {
			return true
		}
	}
	return false
}

// Clone returns a deep copy of n.
func (n *Node) Clone() *Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Acceptance = append([]string{}, n.Acceptance...)
	if n.Answers != nil {
		c.Answers = append([]Answer{}, n.Answers...)
	}
	c.Children = make([]*Node, len(n.Children))
	for i, ch := range n.Children {
		c.Children[i] = ch.Clone()
	}
	return &c
}

// Equal reports whether a and b are equal in every field, children included,
// in their current order.
func Equal(a, b *Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !sameFields(a, b) {
		return false
	}
	for i := range a.Children {
		if !Equal(a.Children[i], b.Children[i]) {
			return false
		}
	}
	return true
}

// nodeField describes one field of Node in nodeFields, the table
// generated from the schema into fast_gen.go with sameFields and
// restoreRunnerOwned: its Go name, JSON key, kind ("string", "integer",
// "boolean", "enum", "strings", "objects" or "children") and groups.
type nodeField struct {
	name, key, kind string
	groups          fieldGroup
}

// fieldGroup is a set of the groups of a node's field.
type fieldGroup uint8

// The groups of a node's field. Every field of the schema is in the first
// three (sameFields compares it); a field is either runner-owned (readOnly
// in the schema) or the agent's. A reflection test fails when a field of
// Node is in none.
const (
	fieldEqual       fieldGroup = 1 << iota // Equal compares it
	fieldUnordered                          // equalUnordered compares it
	fieldImmutable                          // a passed node is held to it: Immutability (equalUnordered, sameOwn)
	fieldAgentOwned                         // not the runner's: an agent's edit on an open node stands, within Structure and ChildAdditions
	fieldRunnerOwned                        // on an existing node only the runner (or tree-edit) changes it: RestoreRunnerOwned puts it back, RunnerOwnedChanges reports it
)

// RunnerOwnedFields are the JSON keys of a node's runner-owned fields
// (readOnly in the schema), in the schema's order: the fields an agent's
// edit of an existing node does not change (RestoreRunnerOwned puts them
// back), as context-write's contract tells the agent.
func RunnerOwnedFields() []string {
	var keys []string
	for _, f := range nodeFields {
		if f.groups&fieldRunnerOwned != 0 {
			keys = append(keys, f.key)
		}
	}
	return keys
}

// Entry is one node found by Index: the node, its parent (nil for the root)
// and its path of ids from the root joined by "/" (e.g. "root/backend/auth").
type Entry struct {
	Node   *Node
	Parent *Node
	Path   string
}

// Index maps every id in the tree to its first Entry in depth-first order
// (children in their stored order).
func Index(root *Node) map[string]Entry {
	m := map[string]Entry{}
	var walk func(n, parent *Node, prefix string)
	walk = func(n, parent *Node, prefix string) {
		p := n.ID
		if prefix != "" {
			p = prefix + "/" + n.ID
		}
		if _, dup := m[n.ID]; !dup {
			m[n.ID] = Entry{Node: n, Parent: parent, Path: p}
		}
		for _, c := range n.Children {
			walk(c, n, p)
		}
	}
	if root != nil {
		walk(root, nil, "")
	}
	return m
}

// Find returns the node with id and its path, or nil.
func Find(root *Node, id string) (*Node, string) {
	var found *Node
	var path []string
	var walk func(n *Node, stack []string) bool
	walk = func(n *Node, stack []string) bool {
		stack = append(stack, n.ID)
		if n.ID == id {
			found, path = n, stack
			return true
		}
		for _, c := range n.Children {
			if walk(c, stack) {
				return true
			}
		}
		return false
	}
	if root != nil {
		walk(root, nil)
	}
	return found, strings.Join(path, "/")
}

// Count returns the number of nodes in the tree.
func Count(root *Node) int {
	if root == nil {
		return 0
	}
	n := 1
	for _, c := range root.Children {
		n += Count(c)
	}
	return n
}
