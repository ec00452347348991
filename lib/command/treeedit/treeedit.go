// Package treeedit is the tree-edit command (DESIGN.md decision
// 16): an operator's changes to open nodes of the task tree, the only way
// besides the loop that runner-owned fields change. `retry` gives a node
// fresh attempts, `decompose` turns an open leaf into a decomposition
// target, `set` edits an open node's title, goal or acceptance, `add`
// adds an open leaf under a node that has not passed. Each edit is
// made surgically on tree.json's bytes with github.com/tidwall/sjson, then
// the tree is validated as any tree write (schema, invariants, passed nodes
// immutable), written canonically and committed alone as
// `chore(loop): operator <action> node <id>` with TREELOOP_COMMIT=operator
// in git's environment (the pre-commit hook's contract). Passed nodes are
// refused, and so is any edit while a runner holds .runner/lock.
package treeedit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/provenance"
	"github.com/treeloop/treeloop/lib/runlock"
	"github.com/treeloop/treeloop/lib/subject"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Options is the command line of tree-edit.
type Options struct {
	cli.Chdir
	Retry     RetryCmd     `cmd:"" help:"Give a stuck or open node fresh attempts: attempts back to 0, and max_attempts set to N with --attempts. Also reopens a passed node that no loop commit backs (tree-validate --audit), with its passed ancestors, to be worked again."`
	Decompose DecomposeCmd `cmd:"" help:"Turn an open leaf into a decomposition target: next becomes decompose and attempts go back to 0, so the next session splits it into children."`
	Set       SetCmd       `cmd:"" help:"Set an open node's title, goal, acceptance (a JSON array of strings) or evidence (witness, suite or default)."`
	Remove    RemoveCmd    `cmd:"" help:"Remove an open node with its subtree, which must hold no passed node. A parent left with only passed children passes (derived, as the loop derives it)."`
	Move      MoveCmd      `cmd:"" help:"Move an open node, with its subtree, under another parent that has not passed, at --order N (default: after the last child). A parent left with only passed children passes."`
	Answer    AnswerCmd    `cmd:"" help:"Answer the question a waiting node asks: the question and the answer go to the node's answers (its next prompts carry them) and the node is open again. While a runner works the answer is queued in .runner/answers/ and the runner commits it between iterations."`
	Add       AddCmd       `cmd:"" help:"Add an open leaf under PARENT, after its last child (or at --order N), with an id made as the loop makes a decomposition's (<PARENT>.<n>, the first n free), passes false, attempts 0 and max_attempts_default of config.toml. PARENT must not have passed (passed nodes are immutable: new work after a finished goal is a new goal, runner-init --new) nor wait for an answer. Under a leaf, the leaf becomes a parent as after a decomposition: its next and attempts stay, its children are worked first and it passes once they all have. Refused while a runner holds .runner/lock, as every edit: stop the loop (runner-cancel), add, then runner-loop."`
	Apply     ApplyCmd     `cmd:"apply-answers" name:"apply-answers" help:"Commit the answers queued in .runner/answers/, each as its own operator edit; an answer to a question its node no longer asks is dropped. Run by runner-step, which holds .runner/lock, before it reads the tree."`
}

// Main runs tree-edit and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("tree-edit", "Change open nodes of the task tree as an operator (retry, decompose, set, remove, move, answer, add), validated and committed as "+subject.Operator("<action>", "<id>")+". Refused for passed nodes and while a runner holds .runner/lock (an answer is queued instead). Prints commit=<sha> <message>. Exit 1 when refused.", &Options{}, args, stdin, stdout, stderr)
}

// Operator is the value of TREELOOP_COMMIT that tree-edit commits with:
// the pre-commit hook lets operator commits change attempts, max_attempts
// and next of open nodes (never passes).
const Operator = "operator"

// RetryCmd is `tree-edit retry`.
type RetryCmd struct {
	ID       string `arg:"" placeholder:"ID" predictor:"node" help:"The node."`
	Attempts int    `placeholder:"N" help:"Also set max_attempts to N (>= 1)."`
}

// Run gives the node fresh attempts.
func (c *RetryCmd) Run(env *cli.Env) error {
	if c.Attempts < 0 {
		return exit.Errorf(exit.Usage, "--attempts must be 1 or more, got %d", c.Attempts)
	}
	return edit(env, subject.ActionRetry, c.ID, func(n *tree.Node, at string, data []byte) ([]byte, error) {
		data, err := reopen(n, at, data)
		if err == nil {
			data, err = sjson.SetBytes(data, field(at, "attempts"), 0)
		}
		if err == nil && c.Attempts > 0 {
			data, err = sjson.SetBytes(data, field(at, "max_attempts"), c.Attempts)
		}
		return data, err
	})
}

// DecomposeCmd is `tree-edit decompose`.
type DecomposeCmd struct {
	ID string `arg:"" placeholder:"ID" predictor:"node" help:"The leaf."`
}

// Run makes the leaf a decomposition target.
func (c *DecomposeCmd) Run(env *cli.Env) error {
	return edit(env, subject.ActionDecompose, c.ID, func(n *tree.Node, at string, data []byte) ([]byte, error) {
		if !n.IsLeaf() {
			return nil, refused("node %s has children: only a leaf is decomposed", n.ID)
		}
		data, err := sjson.SetBytes(data, field(at, "next"), tree.NextDecompose)
		if err == nil {
			data, err = sjson.SetBytes(data, field(at, "attempts"), 0)
		}
		return data, err
	})
}

// SetCmd is `tree-edit set`.
type SetCmd struct {
	ID    string `arg:"" placeholder:"ID" predictor:"node" help:"The node."`
	Field string `arg:"" enum:"title,goal,acceptance,evidence" placeholder:"FIELD" help:"title, goal, acceptance or evidence."`
	Value string `arg:"" placeholder:"VALUE" help:"The new text; for acceptance a JSON array of strings, e.g. '[\"tests pass\"]'; for evidence witness (a test the node adds must fail without its work), suite (the suite alone: docs, configuration, a refactor; the pass is shown as weaker) or default ([guard] evidence and suite_nodes decide)."`
}

// Run sets the field.
func (c *SetCmd) Run(env *cli.Env) error {
	return edit(env, subject.ActionSet, c.ID, func(n *tree.Node, at string, data []byte) ([]byte, error) {
		if c.Field == "evidence" {
			return setEvidence(data, at, c.Value)
		}
		if c.Field != "acceptance" {
			return sjson.SetBytes(data, field(at, c.Field), c.Value)
		}
		var items []string
		if err := json.Unmarshal([]byte(c.Value), &items); err != nil || items == nil {
			return nil, exit.Errorf(exit.Usage, "acceptance takes a JSON array of strings, e.g. '[\"tests pass\"]'")
		}
		return sjson.SetRawBytes(data, field(at, "acceptance"), []byte(c.Value))
	})
}

// setEvidence sets the node's evidence level (DESIGN.md decision 24):
// witness, suite, or default (the field removed).
func setEvidence(data []byte, at, value string) ([]byte, error) {
	switch value {
	case tree.EvidenceWitness, tree.EvidenceSuite:
		return sjson.SetBytes(data, field(at, "evidence"), value)
	case "default":
		return sjson.DeleteBytes(data, field(at, "evidence"))
	}
	return nil, exit.Errorf(exit.Usage, "evidence is witness, suite or default, not %q", value)
}

// RemoveCmd is `tree-edit remove`.
type RemoveCmd struct {
	ID string `arg:"" placeholder:"ID" help:"The open node (not the root)."`
}

// Run removes the node and its subtree.
func (c *RemoveCmd) Run(env *cli.Env) error {
	return edit(env, subject.ActionRemove, c.ID, func(n *tree.Node, at string, data []byte) ([]byte, error) {
		if err := movable(n, at, "removed"); err != nil {
			return nil, err
		}
		return sjson.DeleteBytes(data, at)
	})
}

// MoveCmd is `tree-edit move`.
type MoveCmd struct {
	ID     string `arg:"" placeholder:"ID" help:"The open node (not the root)."`
	Parent string `required:"" placeholder:"P" help:"The new parent: a node that has not passed, outside the moved subtree."`
	Order  *int64 `placeholder:"N" help:"Its order among the new siblings (default: one after the last)."`
}

// Run moves the node under the new parent.
func (c *MoveCmd) Run(env *cli.Env) error {
	if !tree.ValidID(c.Parent) {
		return exit.Errorf(exit.Usage, "--parent %q is not a node id", c.Parent)
	}
	return edit(env, subject.ActionMove, c.ID, func(n *tree.Node, at string, data []byte) ([]byte, error) {
		if err := movable(n, at, "moved"); err != nil {
			return nil, err
		}
		if p, _ := tree.Find(n, c.Parent); p != nil {
			return nil, refused("node %s is in the subtree of %s: a node cannot move under itself", c.Parent, n.ID)
		}
		raw := gjson.GetBytes(data, at).Raw
		data, err := sjson.DeleteBytes(data, at)
		if err != nil {
			return nil, err
		}
		rest, ps := tree.Load(data)
		if len(ps) > 0 {
			return nil, fmt.Errorf("the tree without %s: %v", n.ID, ps)
		}
		p, pat := locate(rest, c.Parent)
		switch {
		case p == nil:
			return nil, refused("no node %s in %s", c.Parent, layout.Tree)
		case p.Passes:
			return nil, refused("node %s has passed: passed nodes are immutable, no child is added to one", c.Parent)
		}
		order := int64(1)
		for _, k := range p.Children {
			order = max(order, k.Order+1)
		}
		if c.Order != nil {
			order = *c.Order
		}
		if raw, err = sjson.Set(raw, "order", order); err != nil {
			return nil, err
		}
		if data, err = sjson.SetRawBytes(data, field(pat, "children.-1"), []byte(raw)); err != nil {
			return nil, err
		}
		// The node joins its siblings in (order, id) order.
		moved, _ := tree.Load(data)
		if moved == nil {
			return data, nil // the validation below words the problem
		}
		tree.Sort(moved)
		return tree.Encode(moved), nil
	})
}

// movable refuses to remove or move the root or a subtree holding a
// passed node.
func movable(n *tree.Node, at, what string) error {
	if at == "" {
		return refused("node %s is the root: it cannot be %s", n.ID, what)
	}
	var passed func(n *tree.Node) string
	passed = func(n *tree.Node) string {
		if n.Passes {
			return n.ID
		}
		for _, k := range n.Children {
			if id := passed(k); id != "" {
				return id
			}
		}
		return ""
	}
	if id := passed(n); id != "" {
		return refused("node %s has passed under %s: passed nodes are immutable, so %s cannot be %s", id, n.ID, n.ID, what)
	}
	return nil
}

// refused is a one-line refusal with exit 1.
func refused(format string, args ...any) error { return exit.Errorf(exit.Negative, format, args...) }

// edit runs one operator edit: lock, read, locate, change, validate,
// write, commit.
func edit(env *cli.Env, action subject.Action, id string, change func(n *tree.Node, at string, data []byte) ([]byte, error)) error {
	if !tree.ValidID(id) {
		return exit.Errorf(exit.Usage, "%q is not a node id", id)
	}
	release, err := lock(env)
	if err != nil {
		return err
	}
	defer release()
	_, err = editHeld(env, action, id, change)
	return err
}

// editHeld is edit with .runner/lock held by the caller; it returns the
// commit.
func editHeld(env *cli.Env, action subject.Action, id string, change func(n *tree.Node, at string, data []byte) ([]byte, error)) (string, error) {
	return editHeldAs(env, action, id, func() string { return id }, change)
}

// editHeldAs is editHeld for an edit whose commit names another node than
// the one it locates (add: the new child, not its parent): named gives
// that node's id once change has run.
func editHeldAs(env *cli.Env, action subject.Action, id string, named func() string, change func(n *tree.Node, at string, data []byte) ([]byte, error)) (string, error) {
	sha, err := editTree(env, action, id, named, change)
	if err == nil {
		fmt.Fprintf(env.Stdout, "commit=%s %s\n", sha, subject.Operator(action, named()))
	}
	return sha, err
}

// editTree reads, locates node id, changes, validates, writes and
// commits, naming the node named gives.
func editTree(env *cli.Env, action subject.Action, id string, named func() string, change func(n *tree.Node, at string, data []byte) ([]byte, error)) (string, error) {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return "", refused("%v", err)
	}
	branch, err := repo.CurrentBranch()
	if err != nil {
		return "", exit.Wrap(exit.RunnerError, err)
	}
	if branch == "main" || branch == "master" || branch == "" {
		return "", refused("on %q, not a run branch: check out runner/<run-id> (runner-start) before editing its tree", branch)
	}
	if out, err := repo.Run("status", "--porcelain", "--", layout.Tree); err != nil {
		return "", exit.Wrap(exit.RunnerError, err)
	} else if len(out) > 0 {
		return "", refused("%s has uncommitted changes: commit or discard them first", layout.Tree)
	}
	path := env.Abs(layout.Tree)
	data, err := fsutil.ReadFile(path, env.Dir, 0)
	if err != nil {
		return "", exit.Errorf(exit.RunnerError, "read %s: %w", layout.Tree, err)
	}
	prev, ps := tree.Load(data)
	if len(ps) > 0 {
		return "", refused("%s is invalid (%s, first: %s); run tree-validate", layout.Tree, vocab.Plural(len(ps), "error", "errors"), ps[0])
	}
	n, at := locate(prev, id)
	if n == nil {
		return "", refused("no node %s in %s", id, layout.Tree)
	}
	// A passed node is immutable, unless no loop commit backs its pass:
	// retry reopens it (lib/provenance).
	var unbacked []provenance.Unbacked
	if n.Passes {
		if action == subject.ActionAdd {
			return "", refused("node %s has passed: passed nodes are immutable, no child is added to one (new work after a finished goal is a new goal: runner-init --new)", id)
		}
		if action != subject.ActionRetry {
			return "", refused("node %s has passed: passed nodes are immutable", id)
		}
		rep, err := provenance.AuditRepo(env.Dir, prev)
		if err != nil {
			return "", exit.Errorf(exit.RunnerError, "audit the passed nodes against the run's history: %v", err)
		}
		if rep.Backed(id) {
			return "", refused("node %s has passed: passed nodes are immutable", id)
		}
		unbacked = rep.Unbacked
	}
	if gjson.GetBytes(data, field(at, "id")).String() != id {
		return "", exit.Errorf(exit.RunnerError, "node %s is not at %s in %s", id, at, layout.Tree)
	}
	edited, err := change(n, at, data)
	if err != nil {
		var ee *exit.Error
		if errors.As(err, &ee) {
			return "", err
		}
		return "", exit.Errorf(exit.RunnerError, "edit %s: %w", layout.Tree, err)
	}
	next, ps := tree.Load(edited)
	if len(ps) == 0 {
		// A parent left with only passed children passes, as the loop
		// derives it (remove, move).
		tree.DerivePasses(next)
		ps = append(ps, tree.Immutability(provenance.Reopen(prev, next, unbacked), next)...)
	}
	if len(ps) > 0 {
		return "", refused("the edit would make %s invalid: %s", layout.Tree, ps[0])
	}
	if tree.Equal(prev, next) {
		return "", refused("node %s already is as asked: nothing to commit", id)
	}
	if err := fsutil.WriteAtomic(path, tree.Encode(next), 0o644); err != nil {
		return "", exit.Errorf(exit.RunnerError, "write %s: %w", layout.Tree, err)
	}
	msg := subject.Operator(action, named()) + "\n\n" + describe(prev, next, named())
	sha, err := repo.CommitPaths(msg, []string{"TREELOOP_COMMIT=" + Operator}, layout.Tree)
	if err != nil {
		// Leave nothing half-done: the tree goes back to what was committed.
		if werr := fsutil.WriteAtomic(path, data, 0o644); werr != nil {
			env.Warnf("restore %s: %v", layout.Tree, werr)
		}
		return "", refused("commit: %v (the tree is unchanged)", err)
	}
	return sha, nil
}

// describe lists what changed on node id, one "field: old -> new" a line,
// for the commit body: its place (parent and order, "removed", or
// "added" and then each of its fields as "field: value") first, then its
// fields and the passes the edit derived on other nodes.
func describe(prev, next *tree.Node, id string) string {
	a, _ := tree.Find(prev, id)
	b, _ := tree.Find(next, id)
	var lines []string
	before, after := tree.Index(prev), tree.Index(next)
	added := a == nil
	if added {
		// Where it went; then every field it was given, below.
		lines = append(lines, fmt.Sprintf("added: %s (parent %s, order %d)", id, after[id].Parent.ID, b.Order))
		a = &tree.Node{}
	}
	if b == nil {
		lines = append(lines, fmt.Sprintf("removed: %s %q (parent %s) with %d node(s) under it", id, a.Title, before[id].Parent.ID, tree.Count(a)-1))
	} else if pa, pb := before[id].Parent, after[id].Parent; !added && pa != nil && pb != nil && (pa.ID != pb.ID || a.Order != b.Order) {
		lines = append(lines, fmt.Sprintf("parent: %s -> %s", pa.ID, pb.ID), fmt.Sprintf("order: %d -> %d", a.Order, b.Order))
	}
	var derived []string
	for pid, e := range after {
		if was, ok := before[pid]; ok && pid != id && e.Node.Passes && !was.Node.Passes {
			derived = append(derived, fmt.Sprintf("passes of %s: false -> true (all its children pass)", pid))
		}
	}
	slices.Sort(derived)
	lines = append(lines, derived...)
	if b == nil {
		return strings.Join(lines, "\n")
	}
	add := func(name string, x, y any) {
		xs, _ := jsondoc.Compact(x)
		ys, _ := jsondoc.Compact(y)
		switch {
		case added:
			lines = append(lines, fmt.Sprintf("%s: %s", name, ys))
		case string(xs) != string(ys):
			lines = append(lines, fmt.Sprintf("%s: %s -> %s", name, xs, ys))
		}
	}
	add("title", a.Title, b.Title)
	add("goal", a.Goal, b.Goal)
	add("acceptance", a.Acceptance, b.Acceptance)
	add("passes", a.Passes, b.Passes)
	add("next", a.Next, b.Next)
	add("attempts", a.Attempts, b.Attempts)
	add("max_attempts", a.MaxAttempts, b.MaxAttempts)
	if len(b.Answers) > len(a.Answers) {
		last := b.Answers[len(b.Answers)-1]
		q, _ := jsondoc.Compact(last.Question)
		ans, _ := jsondoc.Compact(last.Answer)
		lines = append(lines, "question: "+string(q), "answer: "+string(ans))
	}
	return strings.Join(lines, "\n")
}

// locate finds the node id and its gjson/sjson path in the document as
// loaded (children in file order): "" for the root, else
// "children.2.children.0" (node ids may hold dots, indexes never do).
func locate(root *tree.Node, id string) (*tree.Node, string) {
	var walk func(n *tree.Node, at string) (*tree.Node, string)
	walk = func(n *tree.Node, at string) (*tree.Node, string) {
		if n.ID == id {
			return n, at
		}
		for i, k := range n.Children {
			p := "children." + strconv.Itoa(i)
			if at != "" {
				p = at + "." + p
			}
			if f, fp := walk(k, p); f != nil {
				return f, fp
			}
		}
		return nil, ""
	}
	return walk(root, "")
}

// field is the path of field name of the node at at.
func field(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

// lock takes .runner/lock (lib/runlock, as runner-step and runner-loop
// hold it) for the edit, refusing when a runner holds it.
func lock(env *cli.Env) (func(), error) { return takeLock(env, runlock.Take) }

// takeLock takes the lock with take, saying who holds it on a refusal.
func takeLock(env *cli.Env, take func(string) (func(), error)) (func(), error) {
	p := env.Abs(layout.Lock)
	if _, err := os.Stat(env.Abs(layout.Runner)); err != nil {
		return nil, refused("%s: %v (run tree-edit in a repository set up by runner-init)", layout.Runner, fsutil.Cause(err))
	}
	release, err := take(p)
	if errors.Is(err, runlock.ErrHeld) {
		return nil, exit.Wrap(exit.Negative, fmt.Errorf("%w (%s): stop it (or wait for it) before editing the tree", errLocked, runlock.Holder(p)))
	}
	if err != nil {
		return nil, exit.Errorf(exit.RunnerError, "lock %s: %v", layout.Lock, fsutil.Cause(err))
	}
	return release, nil
}

// reopen sets passes to false on the passed node at at and on its passed
// ancestors (an inner node passes only with all its children); the caller
// has checked that no loop commit backs them.
func reopen(n *tree.Node, at string, data []byte) ([]byte, error) {
	if !n.Passes {
		return data, nil
	}
	var err error
	for p := at; err == nil; {
		if gjson.GetBytes(data, field(p, "passes")).Bool() {
			data, err = sjson.SetBytes(data, field(p, "passes"), false)
		}
		if p == "" {
			break
		}
		if k := strings.LastIndex(p, ".children."); k >= 0 {
			p = p[:k]
		} else {
			p = ""
		}
	}
	return data, err
}
