// Package subject is the one home of the runner's commit subjects (seed 000
// §9; DESIGN.md decision 11): each kind is written by one formatter and
// read by one strict parser, so what loop-commit, runner-start and
// tree-edit write is exactly what export, provenance, the ratchet and the
// red-start note read. The grammar, words separated by one space:
//
//	chore(loop): start run <run>
//	chore(loop): run <run> iter <n> node <node> status=<status> guard=<guard>
//	chore(loop): operator <action> node <node>
//
// <run> and <node> are ids (schema.MatchID: no spaces), <n> an iteration
// number >= 1 without leading zeros, <status> an iteration status and
// <guard> a guard outcome of lib/vocab, <action> one of Actions. A parser
// accepts a subject only when formatting what it read gives the subject
// back byte for byte.
package subject

import (
	"slices"
	"strconv"
	"strings"

	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Prefix starts every subject the runner writes.
const Prefix = "chore(loop): "

// Iteration is what an iteration commit's subject says (loop-commit).
type Iteration struct {
	Run    string
	Iter   int // >= 1
	Node   string
	Status vocab.Status
	Guard  vocab.Guard
}

// String is the iteration commit's subject:
// "chore(loop): run <run> iter <n> node <node> status=<status> guard=<guard>".
func (it Iteration) String() string {
	return Prefix + "run " + it.Run + " iter " + strconv.Itoa(it.Iter) + " node " + it.Node +
		" status=" + string(it.Status) + " guard=" + string(it.Guard)
}

// Passed reports whether the iteration passed its node: the agent said
// done and the guard passed, the only way a leaf passes (tree-update).
func (it Iteration) Passed() bool {
	return it.Status == vocab.StatusDone && it.Guard == vocab.GuardPass
}

// ParseIteration reads an iteration commit's subject; ok is false for
// any subject Iteration.String would not write.
func ParseIteration(s string) (it Iteration, ok bool) {
	f := strings.Split(s, " ")
	if len(f) != 9 || f[0]+" " != Prefix || f[1] != "run" || f[3] != "iter" || f[5] != "node" {
		return Iteration{}, false
	}
	it.Run, it.Node = f[2], f[6]
	it.Iter, _ = strconv.Atoi(f[4])
	st, okS := strings.CutPrefix(f[7], "status=")
	g, okG := strings.CutPrefix(f[8], "guard=")
	it.Status, it.Guard = vocab.Status(st), vocab.Guard(g)
	if !okS || !okG || it.Iter < 1 || !schema.MatchID(it.Run) || !schema.MatchID(it.Node) ||
		!slices.Contains(statusWords, st) || !slices.Contains(guardWords, g) || it.String() != s {
		return Iteration{}, false
	}
	return it, true
}

// ParseRunIteration is ParseIteration for an iteration of run runID only.
func ParseRunIteration(s, runID string) (Iteration, bool) {
	it, ok := ParseIteration(s)
	if !ok || it.Run != runID {
		return Iteration{}, false
	}
	return it, true
}

// Start is the subject of run runID's bootstrap commit (runner-start):
// "chore(loop): start run <run>".
func Start(runID string) string { return Prefix + "start run " + runID }

// ParseStart reads a bootstrap commit's subject; ok is false for any
// subject Start would not write.
func ParseStart(s string) (runID string, ok bool) {
	runID, ok = strings.CutPrefix(s, Prefix+"start run ")
	if !ok || !schema.MatchID(runID) {
		return "", false
	}
	return runID, true
}

// OfRun reports whether s is the subject of one of run runID's own
// commits: its bootstrap commit or one of its iteration commits.
func OfRun(s, runID string) bool {
	if r, ok := ParseStart(s); ok {
		return r == runID
	}
	_, ok := ParseRunIteration(s, runID)
	return ok
}

// Action is what an operator's tree-edit did to a node.
type Action string

// The operator's actions (tree-edit's subcommands).
const (
	ActionRetry     Action = "retry"
	ActionDecompose Action = "decompose"
	ActionSet       Action = "set"
	ActionRemove    Action = "remove"
	ActionMove      Action = "move"
	ActionAnswer    Action = "answer"
	ActionAdd       Action = "add"
)

// Actions lists every Action.
var Actions = []Action{ActionRetry, ActionDecompose, ActionSet, ActionRemove, ActionMove, ActionAnswer, ActionAdd}

// Operator is the subject of an operator's tree-edit commit:
// "chore(loop): operator <action> node <node>".
func Operator(action Action, node string) string {
	return Prefix + "operator " + string(action) + " node " + node
}

// ParseOperator reads an operator commit's subject; ok is false for any
// subject Operator would not write.
func ParseOperator(s string) (action Action, node string, ok bool) {
	f := strings.Split(s, " ")
	if len(f) != 5 || f[0]+" " != Prefix || f[1] != "operator" || f[3] != "node" {
		return "", "", false
	}
	action, node = Action(f[2]), f[4]
	for _, a := range Actions {
		if a == action && schema.MatchID(node) {
			return action, node, true
		}
	}
	return "", "", false
}

// The words a subject's status= and guard= may carry: lib/vocab's.
var (
	statusWords = fieldWords("iteration status")
	guardWords  = fieldWords("guard")
)

func fieldWords(name string) []string {
	var ws []string
	for _, f := range vocab.Fields {
		if f.Name == name {
			for _, w := range f.Words {
				ws = append(ws, w.Word)
			}
		}
	}
	return ws
}
