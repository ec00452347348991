package treeupdate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	_ "github.com/treeloop/treeloop/lib/schema/full" // the command links it: tree-update words the schema problems of an agent's output and tree edits
	"github.com/treeloop/treeloop/lib/tree"
)

// snapshot is a root over one open execute leaf "a" with 1 of 3 attempts.
func snapshot() *tree.Node {
	a := &tree.Node{ID: "a", Order: 1, Title: "A", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, Attempts: 1, MaxAttempts: 3, Children: []*tree.Node{}}
	return &tree.Node{ID: "root", Title: "Root", Goal: "g", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3, Children: []*tree.Node{a}}
}

// step is a work directory with the snapshot in iter/tree.before.json and
// the agent's tree (the snapshot with a's title edited) as tree.json.
type step struct{ dir, iter, treePath string }

func newStep(t *testing.T, snap *tree.Node) step {
	t.Helper()
	dir := t.TempDir()
	s := step{dir: dir, iter: filepath.Join(dir, "iter"), treePath: filepath.Join(dir, "tree.json")}
	os.MkdirAll(s.iter, 0o755)
	if err := os.WriteFile(filepath.Join(s.iter, "tree.before.json"), tree.Encode(snap), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := snap.Clone()
	n, _ := tree.Find(edited, "a")
	n.Title = "A, retitled by the agent"
	if err := os.WriteFile(s.treePath, tree.Encode(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s step) output(t *testing.T, status, summary string) {
	t.Helper()
	out := fmt.Sprintf(`{"status": %q, "summary": %q, "children": []}`, status, summary)
	if err := os.WriteFile(filepath.Join(s.iter, "output.json"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (s step) run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", s.dir, "--iter", "iter", "--tree", "tree.json", "--selected", "a"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// node reads a node of the tree tree-update wrote.
func (s step) node(t *testing.T, id string) *tree.Node {
	t.Helper()
	data, err := os.ReadFile(s.treePath)
	if err != nil {
		t.Fatal(err)
	}
	root, ps := tree.Load(data)
	if len(ps) > 0 {
		t.Fatalf("the tree written is invalid: %v", ps)
	}
	n, _ := tree.Find(root, id)
	return n
}

// An outcome that was no attempt (timeout, interruption, runner error,
// pause) puts the snapshot back, edits and all, consumes no attempt and
// records the outcome; a runner error's summary says why from
// runner_error.log.
func TestNoAttemptOutcomesRestoreTheSnapshot(t *testing.T) {
	for _, outcome := range []string{OutcomeTimeout, OutcomeInterrupted, OutcomeRunnerError, OutcomePaused} {
		s := newStep(t, snapshot())
		os.WriteFile(filepath.Join(s.iter, iterdir.RunnerErrorLog), []byte("disk full\n\ndisk full\n"), 0o644)
		code, out, errs := s.run("--outcome", outcome)
		if code != exit.OK || out != "result="+outcome+" id=a passes=false attempts=1/3\n" {
			t.Fatalf("%s: exit %d %q %q", outcome, code, out, errs)
		}
		if n := s.node(t, "a"); n.Title != "A" || n.Attempts != 1 {
			t.Errorf("%s: a is %q with %d attempts, want the snapshot's", outcome, n.Title, n.Attempts)
		}
		var upd iterdir.Update
		if err := iterdir.Read(s.iter, iterdir.UpdateFile, &upd); err != nil || upd.Result != outcome {
			t.Fatalf("%s: update.json %+v (%v)", outcome, upd, err)
		}
		want := ""
		if outcome == OutcomeRunnerError {
			want = "runner error: disk full"
		}
		if upd.Summary != want {
			t.Errorf("%s: summary %q, want %q", outcome, upd.Summary, want)
		}
	}
}

// No output is an agent error: the snapshot back with an attempt
// consumed, the reason in agent_error.log and on stderr, exit 5.
func TestMissingOutputIsAnAgentError(t *testing.T) {
	s := newStep(t, snapshot())
	code, out, errs := s.run()
	if code != exit.AgentError || out != "result=agent-error id=a passes=false attempts=2/3\n" {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
	if !strings.Contains(errs, "agent error: no agent output: iter/output.json was not written") {
		t.Errorf("stderr %q", errs)
	}
	log, _ := os.ReadFile(filepath.Join(s.iter, "agent_error.log"))
	if string(log) != "no agent output: iter/output.json was not written\n" {
		t.Errorf("agent_error.log %q", log)
	}
	if n := s.node(t, "a"); n.Title != "A" || n.Attempts != 2 {
		t.Errorf("a is %q with %d attempts", n.Title, n.Attempts)
	}
}

// An output agent-exec already judged invalid is not judged again: its
// reasons (agent.json) are the iteration's, each once, with the caller's.
func TestJudgedOutputNotJudgedAgain(t *testing.T) {
	s := newStep(t, snapshot())
	rec := iterdir.Agent{Version: 1, Class: "invalid_output", AgentErrors: []string{"output: summary is empty", "protected path touched"}}
	if err := iterdir.Write(s.iter, iterdir.AgentFile, rec); err != nil {
		t.Fatal(err)
	}
	code, _, _ := s.run("--agent-error", "protected path touched")
	if code != exit.AgentError {
		t.Fatalf("exit %d", code)
	}
	log, _ := os.ReadFile(filepath.Join(s.iter, "agent_error.log"))
	if string(log) != "protected path touched\noutput: summary is empty\n" {
		t.Errorf("agent_error.log %q", log)
	}
}

// done needs the guard's outcome: without one it is the caller's mistake
// (usage), nothing written; with pass the leaf passes, keeping the
// agent's title edit and its attempts; with fail one attempt goes.
func TestDoneByGuard(t *testing.T) {
	s := newStep(t, snapshot())
	s.output(t, "done", "made a")
	before, _ := os.ReadFile(s.treePath)
	if code, _, errs := s.run(); code != exit.Usage || !strings.Contains(errs, "status=done needs --guard pass or fail") {
		t.Fatalf("no guard: exit %d %q", code, errs)
	}
	if after, _ := os.ReadFile(s.treePath); !bytes.Equal(before, after) {
		t.Fatal("the tree changed on a usage error")
	}
	if code, out, errs := s.run("--guard", "pass"); code != exit.OK || out != "result=passed id=a passes=true attempts=1/3\n" {
		t.Fatalf("pass: exit %d %q %q", code, out, errs)
	}
	if n := s.node(t, "a"); n.Title != "A, retitled by the agent" || !n.Passes {
		t.Errorf("after pass: %+v", n)
	}
	if root := s.node(t, "root"); !root.Passes {
		t.Error("the root of passed children did not pass")
	}
	s = newStep(t, snapshot())
	s.output(t, "done", "made a")
	if code, out, _ := s.run("--guard", "fail"); code != exit.OK || out != "result=failed id=a passes=false attempts=2/3\n" {
		t.Fatalf("fail: exit %d %q", code, out)
	}
}

// A node that has had the most answers it may cannot ask again: blocked
// is then an agent error saying to decide from the answers.
func TestBlockedAfterTheLastAnswer(t *testing.T) {
	snap := snapshot()
	a, _ := tree.Find(snap, "a")
	for i := range tree.MaxAnswers {
		a.Answers = append(a.Answers, tree.Answer{Question: fmt.Sprintf("q%d", i), Answer: "yes"})
	}
	s := newStep(t, snap)
	s.output(t, "blocked", "Which store?")
	code, _, errs := s.run()
	if code != exit.AgentError || !strings.Contains(errs, fmt.Sprintf("has had %d questions answered, the most it may", tree.MaxAnswers)) {
		t.Fatalf("exit %d %q", code, errs)
	}
	if n := s.node(t, "a"); n.Waiting != "" || n.Attempts != 2 {
		t.Errorf("a waits %q with %d attempts", n.Waiting, n.Attempts)
	}
	// One answer fewer: the node waits on the question, no attempt consumed.
	snap = snapshot()
	a, _ = tree.Find(snap, "a")
	a.Answers = []tree.Answer{{Question: "q", Answer: "a"}}
	s = newStep(t, snap)
	s.output(t, "blocked", "Which store?")
	if code, out, errs := s.run(); code != exit.OK || out != "result=blocked id=a passes=false attempts=1/3\n" {
		t.Fatalf("blocked: exit %d %q %q", code, out, errs)
	}
	if n := s.node(t, "a"); n.Waiting != "Which store?" {
		t.Errorf("a waits on %q", n.Waiting)
	}
}

// The iteration that uses up a leaf's attempts sends it back to the
// agent once in decompose mode under stuck_policy decompose (the flag, or
// config.toml), for a failed guard and an agent error alike; under stop
// and skip it stays stuck; an iteration that consumed no attempt sends
// nothing back.
func TestStuckPolicyDecomposeSendsBack(t *testing.T) {
	lastTry := func() *tree.Node {
		snap := snapshot()
		a, _ := tree.Find(snap, "a")
		a.Attempts = 2
		return snap
	}
	const note = "tree-update: node 'a' used its 3 attempts: it goes back to the agent once in decompose mode, with one attempt more (stuck_policy decompose)\n"
	for _, c := range []struct {
		name   string
		config string // config.toml's stuck_policy line, "" for none
		args   []string
		output bool // an agent output saying done (else none: an agent error)
		code   int
		out    string
	}{
		{"failed guard, flag", "", []string{"--stuck-policy", "decompose", "--guard", "fail"}, true, exit.OK, "result=failed id=a passes=false attempts=3/4\n"},
		{"failed guard, config", `stuck_policy = "decompose"`, []string{"--guard", "fail"}, true, exit.OK, "result=failed id=a passes=false attempts=3/4\n"},
		{"agent error, config", `stuck_policy = "decompose"`, nil, false, exit.AgentError, "result=agent-error id=a passes=false attempts=3/4\n"},
		{"the flag wins over config", `stuck_policy = "decompose"`, []string{"--stuck-policy", "stop", "--guard", "fail"}, true, exit.OK, "result=failed id=a passes=false attempts=3/3\n"},
		{"stop", "", []string{"--guard", "fail"}, true, exit.OK, "result=failed id=a passes=false attempts=3/3\n"},
		{"skip", `stuck_policy = "skip"`, []string{"--guard", "fail"}, true, exit.OK, "result=failed id=a passes=false attempts=3/3\n"},
		{"no attempt consumed", `stuck_policy = "decompose"`, []string{"--outcome", "timeout"}, false, exit.OK, "result=timeout id=a passes=false attempts=2/3\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStep(t, lastTry())
			if c.config != "" {
				os.MkdirAll(filepath.Join(s.dir, ".runner", "state"), 0o755)
				if err := os.WriteFile(filepath.Join(s.dir, ".runner", "state", "config.toml"), []byte(c.config+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.output {
				s.output(t, "done", "made a")
			}
			code, out, errs := s.run(c.args...)
			if code != c.code || out != c.out {
				t.Fatalf("exit %d %q %q, want %d %q", code, out, errs, c.code, c.out)
			}
			a := s.node(t, "a")
			sent := strings.HasSuffix(c.out, "3/4\n")
			if sent != strings.Contains(errs, note) {
				t.Errorf("stderr %q, want the note %v", errs, sent)
			}
			if sent != a.SentBack || sent != (a.Next == tree.NextDecompose) {
				t.Errorf("a: sent_back %v next %s, want sent back %v", a.SentBack, a.Next, sent)
			}
		})
	}
}

func TestDedupe(t *testing.T) {
	got := dedupe([]string{"b", "a", "b", "c", "a"})
	if strings.Join(got, ",") != "b,a,c" {
		t.Errorf("dedupe = %q", got)
	}
}
