package agentexec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/stepctx"
	"github.com/treeloop/treeloop/lib/vocab"
)

// iteration is one iteration's meta.json as reportedRow reads it.
type iteration struct {
	node, status, backend, class string
}

// runDir writes the iterations (1, 2, …) of a run and returns its
// directory.
func runDir(t *testing.T, its ...iteration) string {
	t.Helper()
	dir := t.TempDir()
	for i, it := range its {
		d := filepath.Join(dir, layout.IterName(i+1))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		m := iterdir.Meta{Version: 1, Iteration: i + 1, NodeID: it.node, Status: it.status}
		if it.class != "" {
			m.Agent = &iterdir.Agent{Version: 1, Backend: it.backend, Class: it.class}
		}
		if err := iterdir.Write(d, iterdir.MetaFile, m); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestReportedRow: the failures sessions reported about themselves on the
// node right before the iteration, an interruption passed over; another
// node's iteration, an answer, a CLI's outage end the row.
func TestReportedRow(t *testing.T) {
	paused, retry := string(vocab.StatusPaused), string(vocab.StatusRetry)
	limit := iteration{"b", paused, "command", agent.ClassRateLimit}
	dir := runDir(t,
		iteration{"a", paused, "command", agent.ClassRateLimit},
		iteration{"b", retry, "command", agent.ClassOK},
		limit,
		iteration{"b", string(vocab.StatusInterrupted), "", ""},
		limit,
		iteration{"b", retry, "command", agent.ClassRateLimit}, // one that cost an attempt is still in the row
		iteration{"b", paused, "codex", agent.ClassOutage},
		iteration{"b", string(vocab.StatusRunnerError), "claude", agent.ClassAPIError},
	)
	for _, tt := range []struct {
		iter int
		node string
		want int
	}{
		{1, "a", 0}, {2, "b", 0}, {2, "a", 1}, {3, "b", 0}, {4, "b", 1}, {5, "b", 1}, {6, "b", 2}, {7, "b", 3},
		{8, "b", 0}, {9, "b", 1}, {10, "b", 0}, // iteration 9 is not there: the row starts at 8
		{6, "a", 0},
	} {
		if got := reportedRow(dir, tt.iter, tt.node); got != tt.want {
			t.Errorf("reportedRow(iter %d, node %s) = %d, want %d", tt.iter, tt.node, got, tt.want)
		}
	}
}

// TestOverReported: within max_reported_failures a reported failure is
// free; the next one in the row costs an attempt; what is not reported
// (a CLI's outage, an answer) is never over.
func TestOverReported(t *testing.T) {
	for _, tt := range []struct {
		backend, class string
		row, max       int
		over           bool
	}{
		{"command", agent.ClassRateLimit, 0, 3, false},
		{"command", agent.ClassRateLimit, 2, 3, false},
		{"command", agent.ClassRateLimit, 3, 3, true},
		{"command", agent.ClassRateLimit, 9, 3, true},
		{"command", agent.ClassOutage, 3, 3, true},
		{"command", agent.ClassAuth, 1, 1, true},
		{"claude", agent.ClassRateLimit, 3, 3, true},
		{"codex", agent.ClassAPIError, 5, 3, true},
		{"codex", agent.ClassOutage, 50, 3, false},
		{"command", agent.ClassRateLimit, 0, 0, true},
		{"command", agent.ClassOK, 7, 3, false},
	} {
		why := overReported(tt.backend, tt.class, tt.row, tt.max, "n1")
		if (why != "") != tt.over {
			t.Errorf("overReported(%s, %s, row %d, max %d) = %q, want over %v", tt.backend, tt.class, tt.row, tt.max, why, tt.over)
		}
	}
	if why := overReported("command", agent.ClassRateLimit, 3, 3, "n1"); why != "the session reported rate_limit, the 4th failure in a row it reported about itself on node 'n1' ([agent] max_reported_failures = 3 cost no attempt): this one costs an attempt" {
		t.Errorf("overReported words it %q", why)
	}
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 102: "102nd"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestExitCodeBound: agent-exec's exit for a session that reported a rate
// limit: paused while the row is within max_reported_failures, an agent
// error (an attempt, the reason in agent_errors) past it; an outage the
// CLI met pauses however long the row.
func TestExitCodeBound(t *testing.T) {
	for _, tt := range []struct {
		backend, class string
		row, max       int
		code           int
	}{
		{"command", agent.ClassRateLimit, 2, 3, exit.Paused},
		{"command", agent.ClassRateLimit, 3, 3, exit.AgentError},
		{"command", agent.ClassOutage, 3, 3, exit.AgentError},
		{"command", agent.ClassAPIError, 0, 3, exit.RunnerError},
		{"command", agent.ClassAPIError, 3, 3, exit.AgentError},
		{"codex", agent.ClassOutage, 40, 3, exit.Paused},
		{"claude", agent.ClassRateLimit, 0, 0, exit.AgentError},
	} {
		cfg := config.Default()
		cfg.Agent.MaxReportedFailures = tt.max
		x := &execution{env: &cli.Env{Dir: t.TempDir(), Stderr: &strings.Builder{}}, cfg: cfg, reported: tt.row,
			it:  stepctx.Iteration{Begin: iterdir.Begin{RunID: "run-x", Iteration: tt.row + 1, NodeID: "n1"}},
			rec: iterdir.Agent{Backend: tt.backend, Class: tt.class, Message: "the agent reported " + tt.class, AgentErrors: []string{}}}
		code := x.exitCode(cancel.Verdict{}, nil)
		over := len(x.rec.AgentErrors) == 1 && strings.Contains(x.rec.AgentErrors[0], "max_reported_failures")
		if code != tt.code || over != (tt.code == exit.AgentError) {
			t.Errorf("%s %s, row %d of %d: exit %d, agent errors %q; want exit %d", tt.backend, tt.class, tt.row, tt.max, code, x.rec.AgentErrors, tt.code)
		}
	}
}
