package runrecord

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
)

// stopped is a Stop already done, as after a SIGTERM.
type stopped struct{ context.Context }

func (stopped) Cause() string { return "SIGTERM" }

// TestHookOutcomes: a hook that fails, is killed, cannot start, outlives
// its timeout or is interrupted is logged in the record with its kind and
// a message naming the hook, and warned about; one that passes, or no
// hook configured, leaves the record as it was.
func TestHookOutcomes(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name    string
		argv    []string
		timeout int
		stop    Stop
		kind    string
		msg     string
	}{
		{"exit", []string{"sh", "-c", "echo first; echo '  last words  '; exit 3"}, 30, nil, "hook_failed", "on_stuck (sh): exit 3: last words"},
		{"exit, silent", []string{"sh", "-c", "exit 4"}, 30, nil, "hook_failed", "on_stuck (sh): exit 4"},
		{"signal", []string{"sh", "-c", "kill -KILL $$"}, 30, nil, "hook_failed", "on_stuck (sh): killed by signal killed"},
		{"no program", []string{"./no-such-hook"}, 30, nil, "hook_failed", ""},
		{"timeout", []string{"sh", "-c", "exec sleep 60"}, 1, nil, "hook_timeout", "on_stuck (sh): still running after 1s (hooks.timeout_secs): stopped"},
		{"interrupted", []string{"sh", "-c", "exit 0"}, 30, stopped{done}, "hook_interrupted", "on_stuck (sh): stopped by SIGTERM"},
		{"passes", []string{"sh", "-c", "exit 0"}, 30, nil, "", ""},
		{"none", nil, 30, nil, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r := &Record{Version: 1, ID: "r1", RunID: "r1", Status: Stuck}
			var warned []string
			h := Hooks{Root: dir, Stop: c.stop, Warnf: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }}
			if h.Stop == nil {
				h.Stop = stopNever{context.Background()}
			}
			h.Run(r, "on_stuck", config.Hooks{OnStuck: c.argv, OnComplete: []string{"sh", "-c", "exit 9"}, TimeoutSecs: c.timeout})
			if c.kind == "" {
				if len(r.Log) != 0 || len(warned) != 0 {
					t.Fatalf("log %+v, warned %q", r.Log, warned)
				}
				return
			}
			if len(r.Log) != 1 || r.Log[0].Kind != c.kind || c.msg != "" && r.Log[0].Message != c.msg ||
				!strings.HasPrefix(r.Log[0].Message, "on_stuck ("+c.argv[0]+"): ") {
				t.Fatalf("log %+v, want %s %q", r.Log, c.kind, c.msg)
			}
			if len(warned) != 1 || warned[0] != "hook "+r.Log[0].Message+"; the run goes on" {
				t.Errorf("warned %q", warned)
			}
		})
	}
}

// TestHookIterationVars: a hook after an iteration sees its number and
// node; one before any does not see stale ones.
func TestHookIterationVars(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("RUNNER_NODE_ID", "stale")
	hooks := config.Hooks{OnIteration: []string{"sh", "-c", `printf '%s %s %s\n' "$RUNNER_ITERATION" "$RUNNER_NODE_ID" "$RUNNER_ITERATIONS" >> env.out`}, TimeoutSecs: 30}
	h := Hooks{Root: dir, Stop: stopNever{context.Background()}, Warnf: t.Errorf}
	r := &Record{Version: 1, ID: "r1", RunID: "r1", Status: Running, Iterations: 7}
	h.Run(r, "on_iteration", hooks)
	r.LastIteration = &LastIter{Iter: 7, NodeID: "root.2"}
	h.Run(r, "on_iteration", hooks)
	if got, _ := os.ReadFile(filepath.Join(dir, "env.out")); string(got) != "  7\n7 root.2 7\n" {
		t.Errorf("the hook saw %q", got)
	}
}

// TestIteratedQuestion: after a committed iteration on_iteration runs;
// on_question too when the agent asked (blocked) and its leaf waits for
// the answer, with the question; not when the leaf does not wait, nor
// when the agent did not ask.
func TestIteratedQuestion(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  string
		waiting string
		want    string
	}{
		{"asked", tree.AgentBlocked, "Which store?", "on_iteration 3\non_question 3 Which store?\n"},
		{"answered since", tree.AgentBlocked, "", "on_iteration 3\n"},
		{"done", "done", "Which store?", "on_iteration 3\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			root := &tree.Node{ID: "root", Title: "R", Goal: "g", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3,
				Children: []*tree.Node{{ID: "root.1", Order: 1, Title: "A", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute,
					Attempts: 1, MaxAttempts: 3, Waiting: c.waiting, Children: []*tree.Node{}}}}
			script := `printf '%s %s %s\n' "$RUNNER_EVENT" "$RUNNER_ITERATION" "$RUNNER_QUESTION" | sed 's/ *$//' >> events.out`
			cfg := config.Default()
			cfg.Hooks.OnIteration = []string{"sh", "-c", script}
			cfg.Hooks.OnQuestion = []string{"sh", "-c", script}
			rp := &Repo{Root: dir, Tree: root, Config: cfg,
				LastMeta: &iterdir.Meta{RunID: "r1", Iteration: 3, NodeID: "root.1", Status: c.status, Commit: "0123456789abcdef0123456789abcdef01234567"}}
			r := &Record{Version: 1, ID: "r1", RunID: "r1", Status: Running, Iterations: 2}
			at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			if err := rp.Iterated(r, at, Hooks{Root: dir, Stop: stopNever{context.Background()}, Warnf: t.Errorf}); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(filepath.Join(dir, "events.out")); string(got) != c.want {
				t.Errorf("hooks ran %q, want %q", got, c.want)
			}
			if r.Iterations != 3 || !r.UpdatedAt.Equal(at) || r.LastIteration == nil || r.LastIteration.NodeID != "root.1" {
				t.Errorf("record %+v", r)
			}
		})
	}
}
