package runrecord

import (
	"slices"
	"strings"
	"testing"
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
