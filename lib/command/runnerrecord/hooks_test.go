package runnerrecord

import (
	"slices"
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
