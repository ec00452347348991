package iterlog

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// TestMeta: meta.json's record of an iteration from its begin.json,
// update.json, agent.json and guard.json: a guard that did not finish
// (timeout, interrupted, error) is recorded as it ended, not as
// update.json's word; no guard word is skipped and no reasons are [];
// the run's usage is the last iteration's plus this session's; --now
// must be RFC 3339.
func TestMeta(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, layout.IterName(2))
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(filepath.Join(run, layout.IterName(1)), 0o755)
	prev := iterdir.Meta{Version: 1, RunID: filepath.Base(run), Iteration: 1, RunUsage: iterdir.Usage{InputTokens: 10, CostUSD: 0.5}}
	if err := iterdir.Write(filepath.Join(run, layout.IterName(1)), iterdir.MetaFile, prev); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	begin := iterdir.Begin{Version: 1, RunID: filepath.Base(run), Iteration: 2, NodeID: "a", Attempts: 1, StartedAt: started}
	upd := iterdir.Update{Version: 1, ID: "a", Result: string(vocab.ResultFailed), Guard: tree.GuardFail, Attempts: 2, MaxAttempts: 3}
	e := &EndCmd{Now: "2026-01-02T03:04:15Z"}
	m, err := e.meta(dir, begin, upd)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != string(vocab.StatusDone) || m.Guard != tree.GuardFail || m.Reasons == nil || m.AgentError || m.DurationMS != 10000 || m.AttemptsBefore != 1 || m.AttemptsAfter != 2 {
		t.Errorf("meta %+v", m)
	}
	if m.RunUsage != prev.RunUsage || m.Agent != nil || m.GuardRun != nil {
		t.Errorf("no session records: usage %+v, agent %v, guard %v", m.RunUsage, m.Agent, m.GuardRun)
	}
	iterdir.Write(dir, iterdir.AgentFile, iterdir.Agent{Version: 1, Class: "ok", Usage: iterdir.Usage{InputTokens: 5, CostUSD: 0.25}})
	iterdir.Write(dir, iterdir.GuardFile, iterdir.Guard{Version: 1, Outcome: string(vocab.GuardTimeout)})
	upd.Guard, upd.Result = "", string(vocab.ResultAgentError)
	if m, err = e.meta(dir, begin, upd); err != nil {
		t.Fatal(err)
	}
	if m.Guard != string(vocab.GuardTimeout) || !m.AgentError || m.RunUsage != (iterdir.Usage{InputTokens: 15, CostUSD: 0.75}) || m.Agent == nil || m.GuardRun == nil {
		t.Errorf("with the session's records: guard %q, agent error %v, usage %+v", m.Guard, m.AgentError, m.RunUsage)
	}
	os.Remove(filepath.Join(dir, iterdir.GuardFile))
	if m, _ = e.meta(dir, begin, upd); m.Guard != tree.GuardSkipped {
		t.Errorf("no guard word: %q, want skipped", m.Guard)
	}
	e.Now = "yesterday"
	if _, err := e.meta(dir, begin, upd); exit.Code(err) != exit.Usage {
		t.Errorf("a bad --now: %v", err)
	}
	os.WriteFile(filepath.Join(dir, iterdir.AgentFile), []byte("{"), 0o644)
	e.Now = ""
	if _, err := e.meta(dir, begin, upd); exit.Code(err) != exit.RunnerError {
		t.Errorf("an unreadable agent.json: %v", err)
	}
}

// TestWriteRunState: run_state.json moves past the iteration, and tells
// the next session about this attempt (last_*), an agent error as
// agent_error and an unfinished guard as skipped; a runner error and a
// pause, no attempt, leave last_* as they were; another run's state is
// refused.
func TestWriteRunState(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, filepath.Dir(layout.RunState)), 0o755)
	env := &cli.Env{Dir: root, Stdout: io.Discard, Stderr: io.Discard}
	write := func(s runstate.State) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, layout.RunState), runstate.Encode(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func() runstate.State {
		t.Helper()
		s, err := runstate.Load(filepath.Join(root, layout.RunState))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	begin := iterdir.Begin{RunID: "run-a", Iteration: 4, NodeID: "a"}
	for _, c := range []struct {
		meta          iterdir.Meta
		status, guard string // last_status, last_guard; "" for unchanged
	}{
		{iterdir.Meta{Status: string(vocab.StatusDone), Guard: tree.GuardPass}, "done", "pass"},
		{iterdir.Meta{Status: string(vocab.StatusRetry), Guard: tree.GuardSkipped, AgentError: true}, "agent_error", "skipped"},
		{iterdir.Meta{Status: string(vocab.StatusDone), Guard: string(vocab.GuardTimeout)}, "done", "skipped"},
		{iterdir.Meta{Status: string(vocab.StatusRunnerError), Guard: tree.GuardSkipped}, "", ""},
		{iterdir.Meta{Status: string(vocab.StatusPaused), Guard: tree.GuardSkipped}, "", ""},
	} {
		write(runstate.State{RunID: runstate.Str("run-a"), NextIter: 4, LastStatus: runstate.Str("retry")})
		if _, err := writeRunState(env, begin, c.meta, "why"); err != nil {
			t.Fatal(err)
		}
		s := read()
		if s.NextIter != 5 {
			t.Errorf("%s: next_iter %d", c.meta.Status, s.NextIter)
		}
		if c.status == "" {
			if runstate.Val(s.LastStatus) != "retry" || s.LastIter != nil {
				t.Errorf("%s: last_* changed: %+v", c.meta.Status, s)
			}
			continue
		}
		if runstate.Val(s.LastStatus) != c.status || runstate.Val(s.LastGuard) != c.guard || runstate.Val(s.LastSummary) != "why" || s.LastIter == nil || *s.LastIter != 4 || runstate.Val(s.LastNode) != "a" {
			t.Errorf("%s: %+v, want last_status %s, last_guard %s", c.meta.Status, s, c.status, c.guard)
		}
	}
	write(runstate.State{RunID: runstate.Str("run-b"), NextIter: 4})
	if _, err := writeRunState(env, begin, iterdir.Meta{Status: "done"}, ""); err == nil || !strings.Contains(err.Error(), `run_id "run-b" is not the iteration's run "run-a"`) {
		t.Errorf("another run's state: %v", err)
	}
}
