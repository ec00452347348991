package tree

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/treeloop/treeloop/lib/vocab"
)

// Guard outcomes.
const (
	GuardPass    = string(vocab.GuardPass)
	GuardFail    = string(vocab.GuardFail)
	GuardSkipped = string(vocab.GuardSkipped)
)

// NewChild is a child an agent proposed in a decomposed output.
type NewChild struct {
	Title      string   `json:"title"`
	Goal       string   `json:"goal"`
	Acceptance []string `json:"acceptance"`
	Next       string   `json:"next"`
	// Evidence is what the agent proposed: EvidenceSuite (the child is
	// inserted with EvidenceProposedSuite), EvidenceWitness or "" (nothing
	// set: the configuration decides).
	Evidence string `json:"evidence,omitempty"`
}

// MaxAttemptsLimit is the schema's maximum for attempts and max_attempts.
const MaxAttemptsLimit = 1000000

// check enforces on a proposed child the node schema's limits on the fields
// it supplies, so an inserted child always validates.
func (c NewChild) check() error {
	switch {
	case len(c.Title) == 0 || utf8.RuneCountInString(c.Title) > 256:
		return fmt.Errorf("title must be 1 to 256 characters")
	case utf8.RuneCountInString(c.Goal) > 16384:
		return fmt.Errorf("goal longer than 16384 characters")
	case len(c.Acceptance) > 64:
		return fmt.Errorf("more than 64 acceptance criteria")
	case c.Next != "" && c.Next != NextExecute && c.Next != NextDecompose:
		return fmt.Errorf("next must be execute or decompose, got %q", c.Next)
	case c.Evidence != "" && c.Evidence != EvidenceWitness && c.Evidence != EvidenceSuite:
		return fmt.Errorf("evidence must be witness or suite, got %q", c.Evidence)
	}
	for _, a := range c.Acceptance {
		if utf8.RuneCountInString(a) > 4096 {
			return fmt.Errorf("acceptance criterion longer than 4096 characters")
		}
	}
	return nil
}

// Outcome is what one iteration produced for the selected leaf: the agent's
// status, the guard outcome and, for decomposed, the children to insert.
type Outcome struct {
	Status   string
	Guard    string
	Children []NewChild
	// Question is the agent's summary for blocked: what the leaf waits on.
	Question string
}

// Transition applies the runner-owned transition of 003 (2026-01-17) to the
// selected leaf of t, in place, and leaves t canonically sorted:
//
//	done + pass        passes=true, then internal passes are derived
//	done + fail        attempts+1, saturating at max_attempts
//	retry + skipped    attempts+1, saturating at max_attempts
//	decomposed+skipped children inserted (ids from ChildIDs, order 1..n,
//	                   passes=false, attempts=0, max_attempts=maxAttempts)
//	blocked + skipped  waiting=Question (cut to 16384 code points), no
//	                   attempt consumed; an error once the node has
//	                   MaxAnswers answers
//
// Any other combination, an unknown, non-leaf or waiting selected node, or
// maxAttempts < 1 for a decomposition is an error and t is left unchanged.
func Transition(t *Node, selected string, o Outcome, maxAttempts int) error {
	n, _ := Find(t, selected)
	if n == nil {
		return fmt.Errorf("selected node '%s' not found", selected)
	}
	if !n.IsLeaf() || n.Passes {
		return fmt.Errorf("selected node '%s' is not an open leaf", selected)
	}
	if n.IsWaiting() {
		return fmt.Errorf("selected node '%s' waits for an operator's answer (tree-edit answer)", selected)
	}
	switch {
	case o.Status == AgentDone && o.Guard == GuardPass:
		n.Passes = true
		DerivePasses(t)
	case o.Status == AgentDone && o.Guard == GuardFail, o.Status == AgentRetry && o.Guard == GuardSkipped:
		n.Attempts = min(n.Attempts+1, n.MaxAttempts)
	case o.Status == AgentBlocked && o.Guard == GuardSkipped:
		if len(n.Answers) >= MaxAnswers {
			return fmt.Errorf("node '%s' has had %d questions answered, the most it may: no more questions", selected, MaxAnswers)
		}
		q := o.Question
		if q == "" {
			return fmt.Errorf("status=blocked without a question")
		}
		if utf8.RuneCountInString(q) > nodeWaitingMaxLength {
			q = string([]rune(q)[:nodeWaitingMaxLength])
		}
		n.Waiting = q
	case o.Status == AgentDecomposed && o.Guard == GuardSkipped:
		if len(o.Children) == 0 {
			return fmt.Errorf("status=decomposed without children")
		}
		if maxAttempts < 1 || maxAttempts > MaxAttemptsLimit {
			return fmt.Errorf("max_attempts for new children must be 1 to %d, got %d", MaxAttemptsLimit, maxAttempts)
		}
		for i, c := range o.Children {
			if err := c.check(); err != nil {
				return fmt.Errorf("child %d: %w", i+1, err)
			}
		}
		ids := ChildIDs(t, selected, len(o.Children))
		for i, c := range o.Children {
			next := c.Next
			if next == "" {
				next = NextExecute
			}
			evidence := ""
			if c.Evidence == EvidenceSuite {
				evidence = EvidenceProposedSuite
			}
			n.Children = append(n.Children, &Node{
				ID: ids[i], Order: int64(i + 1), Title: c.Title, Goal: c.Goal,
				Acceptance: append([]string{}, c.Acceptance...), Next: next,
				MaxAttempts: maxAttempts, Evidence: evidence, Children: []*Node{},
			})
		}
	default:
		return fmt.Errorf("no transition for status=%s guard=%s", o.Status, o.Guard)
	}
	Sort(t)
	return nil
}

// DerivePasses marks passed every internal node whose children all pass
// (seed 000 §4.3), bottom-up, in place. It never clears a pass.
func DerivePasses(n *Node) bool {
	if n.IsLeaf() {
		return n.Passes
	}
	all := true
	for _, c := range n.Children {
		if !DerivePasses(c) {
			all = false
		}
	}
	if all {
		n.Passes = true
	}
	return n.Passes
}

// ChildIDs returns k ids for new children of parent that are unique in t,
// match IDPattern and depend only on t and parent: "<parent>.1", "<parent>.2",
// …, skipping ids already taken. When "<parent>.<n>" would exceed MaxIDLen,
// the parent part is shortened and joined with the first 8 hex digits of its
// SHA-256 so distinct long parents stay distinct.
func ChildIDs(t *Node, parent string, k int) []string {
	taken := Index(t)
	base := parent
	out := make([]string, 0, k)
	for seq := 1; len(out) < k; seq++ {
		suffix := "." + strconv.Itoa(seq)
		id := base + suffix
		if len(id) > MaxIDLen {
			sum := sha256.Sum256([]byte(parent))
			h := "-" + hex.EncodeToString(sum[:4])
			id = parent[:MaxIDLen-len(suffix)-len(h)] + h + suffix
		}
		if _, used := taken[id]; used {
			continue
		}
		taken[id] = Entry{}
		out = append(out, id)
	}
	return out
}
