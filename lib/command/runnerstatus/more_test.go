package runnerstatus

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/answer"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// TestMainRunsWorktrees: --runs lists this checkout's records, then each
// run worktree's with where it lives; a worktree whose records cannot be
// read is warned about and left out.
func TestMainRunsWorktrees(t *testing.T) {
	root := fixture(t, 3, 1)
	base := filepath.Dir(root)
	gittest.Run(t, root, "init", "-q", "-b", "main")
	gittest.Run(t, root, "add", "-A")
	gittest.Run(t, root, "commit", "-q", "-m", "start")
	other, broken := filepath.Join(base, "wt-other"), filepath.Join(base, "wt-broken")
	gittest.Run(t, root, "worktree", "add", "-q", "-b", "runner/run-o", other)
	gittest.Run(t, root, "worktree", "add", "-q", "-b", "runner/run-x", broken)
	t.Cleanup(func() { os.RemoveAll(other); os.RemoveAll(broken) })
	start := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
	rec := runrecord.Record{Version: 1, ID: "run-o", RunID: "run-o", Branch: "runner/run-o", Status: runrecord.Complete,
		StartedAt: start, UpdatedAt: start, FinishedAt: &start, Iterations: 4, Nodes: runrecord.Nodes{Total: 3, Passed: 3}}
	if err := os.RemoveAll(filepath.Join(other, layout.Runs)); err != nil {
		t.Fatal(err)
	}
	if err := runrecord.Save(filepath.Join(other, layout.RunRecord("run-o")), rec); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(broken, layout.Runs)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, layout.Runs), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := mainIn(root)("--runs")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[1], "run-b ") || !strings.HasSuffix(lines[1], " .") ||
		!strings.HasPrefix(lines[2], "run-o ") || !strings.Contains(lines[2], " complete ") || !strings.Contains(lines[2], " 3/3 ") ||
		!strings.HasSuffix(lines[2], " "+other) {
		t.Fatalf("--runs: exit %d\n%s", code, out)
	}
	if !strings.HasPrefix(errs, "runner-status: warning: read the records of "+broken+": ") || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q", errs)
	}
	code, out, _ = mainIn(root)("--runs", "--json")
	var got struct{ Runs []Listed }
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Runs) != 2 || got.Runs[0].Worktree != "" || got.Runs[1].Worktree != other {
		t.Errorf("--runs --json: exit %d %v %+v", code, err, got.Runs)
	}
}

// TestPrintPause: the pause line, with its end, cause and reason while
// the run is paused, its count and total alone once it is over; the
// questions and the answers queued.
func TestPrintPause(t *testing.T) {
	since, until := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)
	st := Status{Status: runrecord.Paused, Selection: Selection{Status: tree.StatusOpen},
		Pause:         &runrecord.Pause{Count: 2, TotalSecs: 90, Since: &since, Until: &until, Reason: "rate_limit until 04:00", Cause: string(vocab.PauseUsageLimit)},
		Questions:     []answer.Open{{Path: "r/a", Title: "A", Question: "Which store?\nOr none?"}},
		QueuedAnswers: 2}
	var b bytes.Buffer
	printText(&b, st)
	for _, line := range []string{
		"\npause      until 2026-01-02T04:00:00Z (since 2026-01-02T03:04:05Z): usage-limit: rate_limit until 04:00; 2 pauses on usage limits and outages, 1m30s in all\n",
		"\nquestion   r/a \"A\" asks:\n             Which store?\n             Or none?\n",
		"\nanswers    2 answers queued: the runner commits them before its next iteration\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("no %q in\n%s", line, b.String())
		}
	}
	st.Pause.Until, st.Pause.Cause, st.QueuedAnswers = nil, "", 1
	b.Reset()
	printText(&b, st)
	for _, line := range []string{"\npause      2 pauses on usage limits and outages, 1m30s in all\n", "\nanswers    1 answer queued"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("no %q in\n%s", line, b.String())
		}
	}
	st.Pause = &runrecord.Pause{Count: 1, Since: &since, Until: &until, Reason: "outage"}
	b.Reset()
	printText(&b, st)
	if line := "\npause      until 2026-01-02T04:00:00Z (since 2026-01-02T03:04:05Z): outage; 1 pause on usage limits and outages, 0s in all\n"; !strings.Contains(b.String(), line) {
		t.Errorf("no %q in\n%s", line, b.String())
	}
}

// TestLastPass: the newest passed row, the first one included; none
// without a pass.
func TestLastPass(t *testing.T) {
	passed, failed := string(vocab.ResultPassed), "guard_failed"
	for _, c := range []struct {
		rows []iterdir.Row
		want int
	}{
		{[]iterdir.Row{{Iter: 1, Result: passed}, {Iter: 2, Result: failed}}, 1},
		{[]iterdir.Row{{Iter: 1, Result: passed}, {Iter: 2, Result: passed}, {Iter: 3, Result: failed}}, 2},
		{[]iterdir.Row{{Iter: 1, Result: failed}}, 0},
		{nil, 0},
	} {
		r, ok := lastPass(c.rows)
		if ok != (c.want > 0) || r.Iter != c.want {
			t.Errorf("lastPass(%+v) = %+v %v, want iteration %d", c.rows, r, ok, c.want)
		}
	}
}
