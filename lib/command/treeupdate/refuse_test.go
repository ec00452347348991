package treeupdate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
)

// TestFlagsRefused: the flag combinations tree-update refuses, each a
// usage error that says what to give, and those it takes.
func TestFlagsRefused(t *testing.T) {
	s := newStep(t, snapshot())
	s.output(t, "retry", "again")
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--iter", "iter", "--selected", "a", "--stuck-policy", "later"}, "--stuck-policy must be stop, skip or decompose"},
		{[]string{"--iter", "iter", "--selected", "a", "--base", "HEAD", "--snapshot", "iter/tree.before.json"}, "give --base or --snapshot, not both"},
		{[]string{"--selected", "a"}, "give --iter DIR, or --snapshot (or --base) and --output"},
		{[]string{"--selected", "a", "--snapshot", "iter/tree.before.json"}, "give --iter DIR, or --snapshot (or --base) and --output"},
		{[]string{"--selected", "a", "--output", "iter/output.json"}, "give --iter DIR, or --snapshot (or --base) and --output"},
	} {
		code, _, errs := s.runArgs(append([]string{"--tree", "tree.json"}, c.args...)...)
		if code != exit.Usage || !strings.Contains(errs, c.says) {
			t.Errorf("%q: exit %d, %q; want %d saying %q", c.args, code, errs, exit.Usage, c.says)
		}
	}
	// Without --iter: the snapshot and the output named, or no output
	// for an outcome that was no attempt.
	for _, args := range [][]string{
		{"--snapshot", "iter/tree.before.json", "--output", "iter/output.json"},
		{"--snapshot", "iter/tree.before.json", "--outcome", "timeout"},
	} {
		code, out, errs := s.runArgs(append([]string{"--tree", "tree.json", "--selected", "a"}, args...)...)
		if code != exit.OK || !strings.HasPrefix(out, "result=") {
			t.Errorf("%q: exit %d, %q %q", args, code, out, errs)
		}
	}
}

// runArgs runs tree-update in the step's directory with args alone.
func (s step) runArgs(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := Main(append([]string{"-C", s.dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestSelectedRefused: the selected node must be the open leaf the
// iteration began on: a node that is not a leaf, one that passed, one
// waiting for an operator's answer, one not in the snapshot, and one
// other than begin.json's are runner errors, and nothing is written.
func TestSelectedRefused(t *testing.T) {
	snap := snapshot()
	a := snap.Children[0]
	passed := &tree.Node{ID: "p", Order: 2, Title: "P", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, Passes: true, Attempts: 1, MaxAttempts: 3, Children: []*tree.Node{}}
	waiting := &tree.Node{ID: "w", Order: 3, Title: "W", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, Waiting: "which one?", Attempts: 1, MaxAttempts: 3, Children: []*tree.Node{}}
	snap.Children = []*tree.Node{a, passed, waiting}
	for _, c := range []struct {
		selected, begun, says string
	}{
		{"root", "", "selected node 'root' is not an open leaf of the snapshot"},
		{"p", "", "selected node 'p' is not an open leaf of the snapshot"},
		{"nope", "", "selected node 'nope' is not an open leaf of the snapshot"},
		{"w", "", "selected node 'w' waits for an operator's answer"},
		{"a", "w", "--selected a, but iteration iter began on node w: pass --selected w"},
	} {
		s := newStep(t, snap)
		s.output(t, "retry", "again")
		if c.begun != "" {
			b := iterdir.Begin{Version: 1, RunID: "run-a", NodeID: c.begun}
			if err := iterdir.Write(s.iter, iterdir.BeginFile, b); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := os.ReadFile(s.treePath)
		code, _, errs := s.runArgs("--iter", "iter", "--tree", "tree.json", "--selected", c.selected, "--snapshot", "iter/tree.before.json")
		if code != exit.RunnerError || !strings.Contains(errs, c.says) {
			t.Errorf("%s: exit %d, %q; want %d saying %q", c.selected, code, errs, exit.RunnerError, c.says)
		}
		if after, _ := os.ReadFile(s.treePath); string(after) != string(before) {
			t.Errorf("%s: the tree was written", c.selected)
		}
		if iterdir.Exists(s.iter, iterdir.UpdateFile) {
			t.Errorf("%s: update.json written", c.selected)
		}
	}
}

// TestPolicyOutputJudged: an agent.json of class policy (its session
// broke a rule, its output still to be read) adds its reasons, and the
// output is judged too; update.json lists the reasons and no children.
func TestPolicyOutputJudged(t *testing.T) {
	s := newStep(t, snapshot())
	rec := iterdir.Agent{Version: 1, Class: "policy", AgentErrors: []string{"ran git push"}}
	if err := iterdir.Write(s.iter, iterdir.AgentFile, rec); err != nil {
		t.Fatal(err)
	}
	code, _, _ := s.run()
	if code != exit.AgentError {
		t.Fatalf("exit %d", code)
	}
	log, _ := os.ReadFile(filepath.Join(s.iter, "agent_error.log"))
	if string(log) != "ran git push\nno agent output: iter/output.json was not written\n" {
		t.Errorf("agent_error.log %q", log)
	}
	var upd iterdir.Update
	if err := iterdir.Read(s.iter, iterdir.UpdateFile, &upd); err != nil || len(upd.Reasons) != 2 || upd.Children == nil || len(upd.Children) != 0 {
		t.Errorf("update.json %+v, %v", upd, err)
	}
	// A retry with no reason: reasons [], not null.
	s = newStep(t, snapshot())
	s.output(t, "retry", "again")
	if code, _, errs := s.run(); code != exit.OK {
		t.Fatalf("a retry: exit %d %q", code, errs)
	}
	data, _ := os.ReadFile(filepath.Join(s.iter, iterdir.UpdateFile))
	if !strings.Contains(string(data), `"reasons": []`) || !strings.Contains(string(data), `"children": []`) {
		t.Errorf("update.json %s", data)
	}
}

// TestRunnerErrorSummary: a runner error's summary names why from the
// agent's record (a class other than ok), the guard's (an error), then
// runner_error.log's lines, each once, three at most; nothing from
// records that say no error.
func TestRunnerErrorSummary(t *testing.T) {
	dir := t.TempDir()
	if got := runnerErrorSummary(dir); got != "" {
		t.Errorf("no records: %q", got)
	}
	iterdir.Write(dir, iterdir.AgentFile, iterdir.Agent{Version: 1, Class: "ok", Message: "fine"})
	iterdir.Write(dir, iterdir.GuardFile, iterdir.Guard{Version: 1, Outcome: "fail", Message: "guard failed (exit 1)"})
	if got := runnerErrorSummary(dir); got != "" {
		t.Errorf("records of no error: %q", got)
	}
	iterdir.Write(dir, iterdir.AgentFile, iterdir.Agent{Version: 1, Class: "start_error", Message: "codex could not start"})
	iterdir.Write(dir, iterdir.GuardFile, iterdir.Guard{Version: 1, Outcome: "error", Message: "the guard could not start"})
	os.WriteFile(filepath.Join(dir, iterdir.RunnerErrorLog), []byte("codex could not start\ndisk full\nmore\n"), 0o644)
	if got, want := runnerErrorSummary(dir), "runner error: codex could not start; the guard could not start; disk full"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}
