package contextwrite

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
)

func node(id string, order int64, passes bool, children ...*tree.Node) *tree.Node {
	next := tree.NextExecute
	if len(children) > 0 {
		next = tree.NextDecompose
	}
	return &tree.Node{ID: id, Order: order, Title: "T " + id, Goal: "g", Acceptance: []string{}, Next: next, Passes: passes, MaxAttempts: 3, Children: children}
}

// in is the inputs of iteration 3 of run r1 on node b, whose previous
// attempt (iteration 2) ended as last.
func in(t *testing.T, root *tree.Node, lastNode, lastStatus, lastGuard string) *inputs {
	t.Helper()
	n, _ := tree.Find(root, "b")
	two := 2
	rs := runstate.State{RunID: runstate.Str("r1"), NextIter: 3, LastIter: &two, LastNode: runstate.Str(lastNode),
		LastStatus: runstate.Str(lastStatus), LastGuard: runstate.Str(lastGuard), LastSummary: runstate.Str("tried x")}
	cfg := config.Default()
	cfg.Guard.Command = []string{"just", "ci"}
	return &inputs{env: &cli.Env{Stderr: io.Discard, Dir: t.TempDir()}, cfg: cfg, root: root, node: n, path: "root/b", rs: rs,
		begin: iterdir.Begin{RunID: "r1", Iteration: 3, Mode: tree.NextExecute}}
}

func writeIter(t *testing.T, in *inputs, iter int, name, data string) {
	t.Helper()
	dir := in.env.Abs(layout.IterDir("r1", iter))
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The previous attempt is shown only when it worked the same node; its
// agent-error reasons come from its agent_error.log.
func TestHistoryOnlyOfTheSameNode(t *testing.T) {
	root := node("root", 0, false, node("a", 1, true), node("b", 2, false))
	if h := in(t, root, "a", "done", "pass").history(); h != "" {
		t.Fatalf("another node's attempt shown: %q", h)
	}
	x := in(t, root, "b", "agent_error", "skipped")
	writeIter(t, x, 2, iterdir.AgentErrorLog, "no agent output\n")
	h := x.history()
	for _, want := range []string{"Iteration 2 worked this node and ended with status=agent_error guard=skipped.", "## Its summary\n\ntried x", "## Why it was an agent error\n\nno agent output"} {
		if !strings.Contains(h, want) {
			t.Errorf("history %q lacks %q", h, want)
		}
	}
}

// The guard's failure is shown after done with a red guard only, fenced
// so that the log cannot close the block; a missing log says so.
func TestFailureAfterARedGuard(t *testing.T) {
	root := node("root", 0, false, node("b", 1, false))
	if f := in(t, root, "b", "retry", "skipped").failure(); f != "" {
		t.Fatalf("failure after a retry: %q", f)
	}
	x := in(t, root, "b", "done", "fail")
	if f := x.failure(); !strings.Contains(f, "The guard (`just ci`) failed in iteration 2; its log is not available here") {
		t.Fatalf("no log: %q", f)
	}
	writeIter(t, x, 2, iterdir.GuardLog, "FAIL TestX\n```\nsneaky\n")
	f := x.failure()
	if !strings.Contains(f, "FAIL TestX") || !strings.Contains(f, "````text\n") {
		t.Fatalf("failure %q: want the log in a fence longer than its own", f)
	}
}

// The guard's colour codes stay in guard.log but not in failure.md, and
// stripping them cannot join backtick runs into one the fence is too
// short for; the other sections' text loses them too.
func TestFailureWithoutTerminalEscapes(t *testing.T) {
	root := node("root", 0, false, node("b", 1, false))
	x := in(t, root, "b", "done", "fail")
	raw := "\x1b[31mFAIL\x1b[0m TestX\n``\x1b[1m``\n\x1b]8;;file:///x\x07link\x1b]8;;\x07\n"
	writeIter(t, x, 2, iterdir.GuardLog, raw)
	f := x.failure()
	if strings.Contains(f, "\x1b") || !strings.Contains(f, "FAIL TestX\n````\nlink\n") || !strings.Contains(f, "`````text\n") {
		t.Fatalf("failure %q: want the log without escapes, in a fence longer than its four backticks", f)
	}
	x.rs.LastSummary = runstate.Str("\x1b[33mtried\x1b[0m x")
	for _, s := range x.sections(map[string]string{GoalFile: "g", HistoryFile: x.history(), FailureFile: f}) {
		if strings.ContainsRune(s.Body, 0x1b) {
			t.Errorf("section %s keeps an escape: %q", s.Name, s.Body)
		}
	}
	if data, _ := os.ReadFile(x.env.Abs(filepath.Join(layout.IterDir("r1", 2), iterdir.GuardLog))); string(data) != raw {
		t.Fatalf("guard.log changed: %q", data)
	}
}

// The tree summary marks the selected node, folds passed subtrees and
// lists siblings in (order, id) order.
func TestSummary(t *testing.T) {
	root := node("root", 0, false, node("z", 1, false), node("done", 0, true, node("d1", 1, true), node("d2", 2, true)), node("b", 1, false))
	got := in(t, root, "", "", "").summary()
	want := "- [ ] root: T root\n" +
		"  - [x] done: T done\n" +
		"    (2 passed nodes folded)\n" +
		"  - [ ] b: T b  ← selected\n" +
		"  - [ ] z: T z  (execute, attempts 0/3)\n"
	if got != want {
		t.Fatalf("summary:\n%s\nwant:\n%s", got, want)
	}
}

// A tree longer than the summary's bound ends with the count of the
// nodes left out.
func TestSummaryBound(t *testing.T) {
	var kids []*tree.Node
	for i := range treeLines + 10 {
		kids = append(kids, node(fmt.Sprintf("n%04d", i), int64(i), false))
	}
	kids = append(kids, node("b", int64(treeLines+20), false))
	got := in(t, node("root", 0, false, kids...), "", "", "").summary()
	if lines := strings.Count(got, "\n"); lines != treeLines+1 || !strings.HasSuffix(got, "… 12 more nodes not shown\n") {
		t.Fatalf("%d lines, ending %q", lines, got[len(got)-40:])
	}
}

// Clearing the context directory keeps the regular files about to be
// rewritten and removes everything else, a symbolic link among them; a
// context path that is no directory is replaced by one.
func TestClearContext(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "context")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, GoalFile), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(dir, "stale.md"), []byte("old"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, HistoryFile))
	if err := clearContext(dir, map[string]string{GoalFile: "", HistoryFile: ""}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != GoalFile {
		t.Fatalf("left %v, want only %s", ents, GoalFile)
	}
	os.RemoveAll(dir)
	os.WriteFile(dir, []byte("a file"), 0o644)
	if err := clearContext(dir, nil); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		t.Fatalf("context is not a directory: %v", err)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("  a\r\nb\nc\rd  e "); got != "a b c d  e" {
		t.Errorf("oneLine = %q", got)
	}
}

// A leaf sent back to decompose (stuck_policy decompose) is told why it
// comes back and what is asked of it; any other decompose session is not.
func TestContractOfALeafSentBack(t *testing.T) {
	const said = "came back to you once in decompose mode (sent_back)"
	root := node("root", 0, false, node("b", 1, false))
	x := in(t, root, "b", "retry", "skipped")
	x.begin.Mode = tree.NextDecompose
	if c := x.contract(); strings.Contains(c, said) {
		t.Errorf("a decompose session not sent back is told it was:\n%s", c)
	}
	x.node.SentBack = true
	if c := x.contract(); !strings.Contains(c, said) || !strings.Contains(c, "When its attempts run out again, it stays stuck.") {
		t.Errorf("the contract of a leaf sent back:\n%s", c)
	}
}

// TestContractProtected: the contract names the protected globs, the
// append-only ones and the protected keys apart, each as the agent may
// act on it.
func TestContractProtected(t *testing.T) {
	root := node("root", 0, false, node("b", 1, false))
	x := in(t, root, "b", "done", "fail")
	x.cfg.ProtectedPaths = []string{"**/conftest.py", "append-only:tests", "**/pyproject.toml#tool.pytest", "package.json#jest"}
	c := x.contract()
	for _, want := range []string{
		", or the protected paths **/conftest.py.\n",
		"- tests are append-only:",
		"- Do not change these settings (the rest of their files is yours, a dependency included): tool.pytest in **/pyproject.toml, jest in package.json. A change to one puts the whole file back.\n",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("the contract lacks %q:\n%s", want, c)
		}
	}
}

// TestContractRunnerOwned: the contract names every runner-owned field of
// the node's field table (the schema's readOnly), and no other, as the
// fields whose changes are reset.
func TestContractRunnerOwned(t *testing.T) {
	root := node("root", 0, false, node("b", 1, false))
	c := in(t, root, "b", "done", "fail").contract()
	want := "- next, passes, attempts, max_attempts, evidence, sent_back, waiting and answers are runner-owned: your changes to them are reset.\n"
	if !strings.Contains(c, want) {
		t.Errorf("the contract lacks %q:\n%s", want, c)
	}
	if got := strings.Join(tree.RunnerOwnedFields(), ","); got != "next,passes,attempts,max_attempts,evidence,sent_back,waiting,answers" {
		t.Errorf("RunnerOwnedFields = %s", got)
	}
}
