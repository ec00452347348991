package runrecord

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// A hook sees the documented variables of its event, never the step's
// private ones nor a stale value of a documented one.
func TestHookEnv(t *testing.T) {
	env := []string{"PATH=/bin", "RUNNER_STEP_ROOT=/r", "RUNNER_STEP_HEAD=abc", "RUNNER_STEP_BRANCH=runner/x", "TREELOOP_RECORD=x", "RUNNER_TRACE_T0=1.5",
		"RUNNER_NODE_ID=stale", "RUNNER_STATUS=stale", "RUNNER_AGENT=codex"}
	got := hookEnv(env, []string{"RUNNER_EVENT=on_complete", "RUNNER_STATUS=complete"})
	want := []string{"PATH=/bin", "RUNNER_AGENT=codex", "RUNNER_EVENT=on_complete", "RUNNER_STATUS=complete"}
	if !slices.Equal(got, want) {
		t.Errorf("hookEnv = %q, want %q", got, want)
	}
}

// A failing hook's message keeps its output's last line, at most 200
// bytes.
func TestLastLine(t *testing.T) {
	if got := lastLine("a\n" + strings.Repeat("x", 250) + "\n\n"); got != strings.Repeat("x", 200) {
		t.Errorf("lastLine kept %d bytes", len(got))
	}
}

// stopNever is a Stop that never stops.
type stopNever struct{ context.Context }

func (stopNever) Cause() string { return "" }

// A notification quotes text without terminal escapes: the hook's
// RUNNER_* values and the record on its stdin; the record itself keeps
// what was written.
func TestHookSeesReadableText(t *testing.T) {
	dir := t.TempDir()
	r := &Record{Version: 1, ID: "r1", RunID: "r1", GoalTitle: "\x1b[1mGoal\x1b[0m", Status: "running",
		Reason: "iteration 2: \x1b[31mFAIL\x1b[0m TestX", Log: []Entry{{Kind: "hook_failed", Message: "\x1b]0;t\x07exit 1"}},
		Pause: &Pause{Reason: "\x1b[33mlimit\x1b[0m"}}
	hooks := config.Hooks{OnQuestion: []string{"sh", "-c", `printf '%s\n%s\n' "$RUNNER_REASON" "$RUNNER_QUESTION" > env.out; cat > stdin.json`}, TimeoutSecs: 30}
	var warned []string
	h := Hooks{Root: dir, Stop: stopNever{context.Background()}, Warnf: func(f string, a ...any) { warned = append(warned, fmt.Sprintf(f, a...)) }}
	h.Run(r, "on_question", hooks, "RUNNER_QUESTION=\x1b[1mPostgres\x1b[0m or SQLite?")
	if len(warned) > 0 {
		t.Fatalf("the hook failed: %v", warned)
	}
	env, _ := os.ReadFile(filepath.Join(dir, "env.out"))
	if string(env) != "iteration 2: FAIL TestX\nPostgres or SQLite?\n" {
		t.Errorf("the hook's variables: %q", env)
	}
	in, _ := os.ReadFile(filepath.Join(dir, "stdin.json"))
	var got Record
	if err := json.Unmarshal(in, &got); err != nil {
		t.Fatalf("the hook's stdin: %v: %s", err, in)
	}
	if bytes.Contains(in, []byte(`\u001b`)) || got.Reason != "iteration 2: FAIL TestX" || got.GoalTitle != "Goal" || got.Log[0].Message != "exit 1" || got.Pause.Reason != "limit" {
		t.Errorf("the hook's stdin keeps escapes: %s", in)
	}
	if r.Reason != "iteration 2: \x1b[31mFAIL\x1b[0m TestX" || r.Log[0].Message != "\x1b]0;t\x07exit 1" || r.Pause.Reason != "\x1b[33mlimit\x1b[0m" {
		t.Errorf("the record itself changed: %+v", r)
	}
}
