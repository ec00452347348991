package runnerstatus

import (
	"bytes"
	"encoding/json"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/guard"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/provenance"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// TestNextStep: the advice for each state, the iteration limit at its
// edge (the last iteration allocated equal to max_iterations is the
// limit, one below is not), and which state wins when several hold.
func TestNextStep(t *testing.T) {
	open := Selection{Status: tree.StatusOpen, ID: "a"}
	stuck := Selection{Status: tree.StatusStuck, ID: "a.b", Attempts: 3, MaxAttempts: 3}
	complete := Selection{Status: tree.StatusComplete}
	raiseIters := "raise max_iterations in .runner/state/config.toml (or RUNNER_MAX_ITERATIONS), then runner-loop"
	resume := "runner-loop resumes the run"
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	stuckStep := "node a.b has no attempts left (3/3): give it more with tree-edit retry a.b [--attempts N], or split it with tree-edit decompose a.b; then runner-loop"
	for _, c := range []struct {
		name string
		st   Status
		want string
	}{
		{"running", Status{Status: runrecord.Running, Selection: open, Iteration: Iteration{Last: 4, Max: 5}}, ""},
		{"at the limit", Status{Status: runrecord.Running, Selection: open, Iteration: Iteration{Last: 5, Max: 5}}, raiseIters},
		{"past the limit", Status{Status: runrecord.Running, Selection: open, Iteration: Iteration{Last: 6, Max: 5}}, raiseIters},
		{"no limit", Status{Status: runrecord.Running, Selection: open, Iteration: Iteration{Last: 500, Max: 0}}, ""},
		{"first iteration", Status{Status: "none", Selection: open, Iteration: Iteration{Last: 0, Max: 1}}, ""},
		{"limit record", Status{Status: runrecord.Limit, Reason: "limit: max-tokens 5000 reached", Selection: open, Iteration: Iteration{Last: 1, Max: 5}},
			"raise [agent] max_tokens in .runner/state/config.toml, then runner-loop"},
		{"stuck", Status{Status: runrecord.Stuck, Selection: stuck}, stuckStep},
		{"stuck, others stuck too", Status{Status: runrecord.Stuck, Selection: stuck, StuckLeaves: make([]runrecord.StuckLeaf, 2)}, stuckStep},
		{"stuck under skip", Status{Status: runrecord.Stuck, Selection: stuck, policy: tree.StuckSkip, StuckLeaves: make([]runrecord.StuckLeaf, 2)},
			"no leaf is left to work but 2 stuck leaves (listed above): give it more with tree-edit retry ID [--attempts N], or split it with tree-edit decompose ID; then runner-loop"},
		{"one stuck under skip", Status{Status: runrecord.Stuck, Selection: stuck, policy: tree.StuckSkip, StuckLeaves: make([]runrecord.StuckLeaf, 1)}, stuckStep},
		{"stuck at the limit", Status{Status: runrecord.Limit, Selection: stuck, Iteration: Iteration{Last: 5, Max: 5}}, stuckStep},
		{"complete", Status{Status: runrecord.Complete, Selection: complete, Branch: "runner/r"}, "the tree is complete: review branch runner/r and merge it"},
		{"complete at the limit", Status{Status: runrecord.Limit, Selection: complete, Branch: "runner/r", Iteration: Iteration{Last: 5, Max: 5}},
			"the tree is complete: review branch runner/r and merge it"},
		{"complete, no run", Status{Status: "none", Selection: complete}, "the tree is complete"},
		{"interrupted", Status{Status: runrecord.Interrupted, Selection: open}, resume},
		{"canceled", Status{Status: runrecord.Canceled, Selection: open}, resume},
		{"timeout", Status{Status: runrecord.Timeout, Selection: open}, resume},
		{"interrupted at the limit", Status{Status: runrecord.Interrupted, Selection: open, Iteration: Iteration{Last: 5, Max: 5}}, raiseIters},
		{"error", Status{Status: runrecord.Error, Selection: open}, "fix the cause in the reason, then runner-loop"},
		{"none", Status{Status: "none", Selection: open}, ""},
		{"cancel pending", Status{Status: runrecord.Canceled, Selection: stuck, Cancel: &cancel.Pending{By: "runner-cancel", PID: 7, At: at}},
			"a cancel request is pending (by runner-cancel (pid 7) at 2026-01-02T03:04:05Z) and no runner works: the next runner-loop would stop at once, using it up; runner-cancel --clear withdraws it, then runner-loop"},
		{"cancel pending, no pid", Status{Status: runrecord.Canceled, Selection: open, Cancel: &cancel.Pending{By: "runner-ui", At: at}},
			"a cancel request is pending (by runner-ui at 2026-01-02T03:04:05Z) and no runner works: the next runner-loop would stop at once, using it up; runner-cancel --clear withdraws it, then runner-loop"},
		{"cancel pending, unsigned", Status{Status: runrecord.Interrupted, Selection: open, Cancel: &cancel.Pending{PID: 7, At: at}},
			"a cancel request is pending (by an unknown hand at 2026-01-02T03:04:05Z) and no runner works: the next runner-loop would stop at once, using it up; runner-cancel --clear withdraws it, then runner-loop"},
		{"cancel pending while running", Status{Status: runrecord.Running, Selection: open, Cancel: &cancel.Pending{At: at}, Running: &iterdir.Running{Iteration: 3}, live: true}, ""},
		{"cancel pending between steps", Status{Status: runrecord.Running, Selection: open, Cancel: &cancel.Pending{At: at}, live: true}, ""},
		{"unfinished", Status{Status: runrecord.Interrupted, Selection: stuck, unfinished: 4},
			"iteration 4 was left unfinished (no runner works on it): runner-step or runner-loop recovers it first"},
		{"unbacked", Status{Status: runrecord.Running, Selection: open, Cancel: &cancel.Pending{At: at}, unfinished: 4,
			Unbacked: []provenance.Unbacked{{Node: "a", Reason: "no loop commit", Leaf: "a.1"}}},
			"node a is passed without a backing loop commit (no loop commit): reopen it with tree-edit retry a.1; runner-step refuses to go on until then"},
		{"unbacked, three", Status{Status: runrecord.Running, Selection: open,
			Unbacked: []provenance.Unbacked{{Node: "a", Reason: "r", Leaf: "a"}, {Node: "b"}, {Node: "c"}}},
			"node a is passed without a backing loop commit (r) (and 2 more: tree-validate --audit): reopen it with tree-edit retry a; runner-step refuses to go on until then"},
		{"unbacked, two", Status{Status: runrecord.Running, Selection: open,
			Unbacked: []provenance.Unbacked{{Node: "a", Reason: "r", Leaf: "a"}, {Node: "b"}}},
			"node a is passed without a backing loop commit (r) (and 1 more: tree-validate --audit): reopen it with tree-edit retry a; runner-step refuses to go on until then"},
		{"waiting", Status{Status: runrecord.Waiting, Selection: Selection{Status: tree.StatusWaiting}},
			"every open leaf waits for an operator's answer: answer each question above with tree-edit answer ID TEXT, then runner-loop (runner-loop --wait waits for answers)"},
		{"paused on a limit", Status{Status: runrecord.Paused, Selection: open, Runner: &runrecord.Runner{PID: 7}, Pause: &runrecord.Pause{Until: &at}},
			"a usage limit paused the run until 2026-01-02T03:04:05Z: the loop goes on by itself then (runner-cancel stops it)"},
		{"paused on an outage", Status{Status: runrecord.Paused, Selection: open, Runner: &runrecord.Runner{PID: 7}, Pause: &runrecord.Pause{Until: &at, Cause: string(vocab.PauseOutage)}},
			"an outage paused the run until 2026-01-02T03:04:05Z: the loop goes on by itself then (runner-cancel stops it)"},
		{"paused, no runner", Status{Status: runrecord.Paused, Selection: open, Pause: &runrecord.Pause{Until: &at}},
			"a usage limit or an outage stopped the run: runner-loop again once the limit resets or the provider answers"},
		{"paused, no end", Status{Status: runrecord.Paused, Selection: open, Runner: &runrecord.Runner{PID: 7}, Pause: &runrecord.Pause{}},
			"a usage limit or an outage stopped the run: runner-loop again once the limit resets or the provider answers"},
	} {
		if got := nextStep(c.st); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestLimitStep(t *testing.T) {
	for reason, want := range map[string]string{
		"limit: max-tokens 5000 reached":  "raise [agent] max_tokens in .runner/state/config.toml, then runner-loop",
		"limit: max-cost-usd 2.5 reached": "raise [agent] max_cost_usd in .runner/state/config.toml, then runner-loop",
		"limit: max-steps 3 reached":      "runner-loop continues the run",
		"limit: max-iterations 9 reached": "raise max_iterations in .runner/state/config.toml (or RUNNER_MAX_ITERATIONS), then runner-loop",
		"":                                "raise max_iterations in .runner/state/config.toml (or RUNNER_MAX_ITERATIONS), then runner-loop",
	} {
		if got := LimitStep(reason); got != want {
			t.Errorf("LimitStep(%q) = %q, want %q", reason, got, want)
		}
	}
}

// TestPrintText: every line of the screen, from a full status and from
// one before any run.
func TestPrintText(t *testing.T) {
	rec, started := "run-b.2", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := Status{
		RunID: "run-b", Branch: "runner/run-b", Record: &rec, Status: runrecord.Running, Reason: "resumed",
		Runner: &runrecord.Runner{PID: 42, Host: "h"}, StartedAt: &started, ElapsedSecs: 3725,
		Iteration: Iteration{Last: 7, Max: 100}, Baseline: "fail",
		Selection: Selection{Status: tree.StatusOpen, ID: "n1", Path: "n0/n1", Mode: "execute", Title: "Do \"it\"", Attempts: 1, MaxAttempts: 3},
		Nodes:     runrecord.Nodes{Total: 4, Passed: 1, Open: 2, Stuck: 1},
		Usage:     runrecord.Usage{InputTokens: 1000, OutputTokens: 234, CachedTokens: 99999, CostUSD: 0.125},
		Budgets:   runrecord.Budgets{MaxTokens: 5000, MaxCostUSD: 2.5},
		Recent: []iterdir.Row{{Iter: 6, NodeID: "n1", Status: "retry", Result: "guard_failed", Guard: "fail", DurationMS: 850, Tokens: 1200, CostUSD: 0.01},
			{Iter: 7, NodeID: "n1", Status: "done", Result: "passed", Guard: "pass", DurationMS: 185000, Tokens: 34, CostUSD: 0.115,
				Evidence: &iterdir.Cited{Level: "witness", Held: true, Passed: 3, Skipped: 1, PassToPass: 2, PassedAgain: 2, Witnesses: []string{"tests.test_a::test_b"}}}},
		Log:         []runrecord.Entry{{At: started, Kind: "hook_failed", Message: "on_iteration: exit 1"}},
		NextStep:    "do this",
		StuckLeaves: []runrecord.StuckLeaf{{ID: "n2", Path: "n0/n2", Title: "Stuck", Attempts: 3, MaxAttempts: 3}},
	}
	want := `run        run-b  branch runner/run-b  record run-b.2
status     running (pid 42 on h): resumed
iteration  7/100  elapsed 1h2m5s
baseline   red start: the guard's outcome was fail when the run started (see .runner/iterations/run-b/baseline.log)
node       open n0/n1  execute  attempts 1/3  "Do \"it\""
tree       4 nodes: 1 passed, 2 open, 1 stuck
stuck      n0/n2  attempts 3/3  "Stuck"
usage      1234 tokens of 5000, $0.1250 of $2.50
last iterations
  iter  node  result        guard  evidence   duration  tokens     cost
     6  n1    guard_failed  fail   -             850ms    1200  $0.0100
     7  n1    passed        pass   witnessed      3m5s      34  $0.1150
last pass  iteration 7  node n1: witnessed by tests.test_a::test_b; 3 passed, 0 failed, 1 skipped; 2 of 2 that passed before passed again
log        2026-01-02T03:04:05Z hook_failed: on_iteration: exit 1
next       do this
`
	var b bytes.Buffer
	printText(&b, st)
	if b.String() != want {
		t.Errorf("full status:\n%s\nwant:\n%s", b.String(), want)
	}
	st.Runner.PID, st.Reason, st.Baseline = 0, "", "pass"
	b.Reset()
	printText(&b, st)
	for _, line := range []string{"status     running (between steps)\n", "baseline   green: the guard passed when the run started\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("between steps: no %q in\n%s", line, b.String())
		}
	}
	want = `run        none started (run runner-start)
status     none
iteration  0/100
node       complete
tree       1 node: 1 passed, 0 open, 0 stuck
usage      0 tokens of unlimited, $0.0000 of unlimited
`
	b.Reset()
	printText(&b, Status{Status: "none", Iteration: Iteration{Max: 100}, Selection: Selection{Status: tree.StatusComplete}, Nodes: runrecord.Nodes{Total: 1, Passed: 1}})
	if b.String() != want {
		t.Errorf("no run:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestReadRecords: the newest record of the current run gives the
// status, its runner only while running, and the time since its start
// (until its end once finished); the baseline comes from the run's
// baseline.json.
func TestReadRecords(t *testing.T) {
	root := fixture(t, 25, 7)
	now := time.Date(2026, 1, 1, 1, 0, 30, 0, time.UTC)
	st, err := Read(root, 3, now, noWarn(t))
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if st.Iteration != (Iteration{Last: 7, Max: 100}) || st.Runner == nil || *st.Runner != (runrecord.Runner{PID: os.Getpid(), Host: host}) ||
		st.ElapsedSecs != 3630 || st.Baseline != "" || st.Branch != "runner/run-b" || len(st.Recent) != 3 || st.Recent[0].Iter != 5 {
		t.Fatalf("running: %+v", st)
	}
	if st.Usage != (runrecord.Usage{InputTokens: 7000, OutputTokens: 1400, CostUSD: 0.07}) {
		t.Errorf("usage: %+v", st.Usage)
	}
	// The run's usage is the last meta.json's run_usage, each field from
	// its own.
	dir := filepath.Join(root, layout.IterDir("run-b", 7))
	var m iterdir.Meta
	if err := iterdir.Read(dir, iterdir.MetaFile, &m); err != nil {
		t.Fatal(err)
	}
	m.RunUsage = iterdir.Usage{InputTokens: 7001, OutputTokens: 1402, CachedTokens: 123456, CostUSD: 0.0725}
	if err := iterdir.Write(dir, iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
	if st, err := Read(root, 3, now, noWarn(t)); err != nil || st.Usage != (runrecord.Usage{InputTokens: 7001, OutputTokens: 1402, CachedTokens: 123456, CostUSD: 0.0725}) {
		t.Errorf("usage: %+v %v", st.Usage, err)
	}
	start := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)
	end := start.Add(90 * time.Second)
	for _, r := range []runrecord.Record{
		{ID: "run-b.2", RunID: "run-b", Status: runrecord.Stuck, Reason: "stuck: node n1", StartedAt: start, FinishedAt: &end},
		{ID: "run-x", RunID: "run-x", Status: runrecord.Running, StartedAt: start.Add(time.Hour)},
	} {
		r.Version, r.Branch, r.UpdatedAt, r.Log = 1, "runner/"+r.RunID, start, []runrecord.Entry{}
		if err := runrecord.Save(filepath.Join(root, layout.RunRecord(r.ID)), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := iterdir.Write(filepath.Join(root, layout.Iterations, "run-b"), guard.BaselineFile, iterdir.Guard{Version: 1, Outcome: "fail"}); err != nil {
		t.Fatal(err)
	}
	st, err = Read(root, 0, now, noWarn(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Record == nil || *st.Record != "run-b.2" || st.Status != runrecord.Stuck || st.Reason != "stuck: node n1" || st.Runner != nil ||
		st.ElapsedSecs != 90 || st.Baseline != "fail" || len(st.Recent) != 7 {
		t.Fatalf("finished: %+v", st)
	}
}

// TestMain: exit 0 with an open leaf, 2 complete, 3 stuck, 7 waiting for
// answers, 1 when the state cannot be read; --json and --runs.
func TestMainExits(t *testing.T) {
	root := fixture(t, 3, 1)
	run := mainIn(root)
	if code, out, errs := run(); code != 0 || !strings.HasPrefix(out, "run        run-b  branch runner/run-b  record run-b\n") || errs != "" {
		t.Fatalf("open: %d %q %q", code, out, errs)
	}
	code, out, _ := run("--json")
	var st Status
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Version != 1 || st.Selection.Status != tree.StatusOpen {
		t.Fatalf("--json: %d %v %+v", code, err, st)
	}
	data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
	n, _ := tree.Load(data)
	// Every open leaf waits for an operator's answer: exit 7, not stuck.
	for _, k := range n.Children {
		k.Waiting = "Which database?"
	}
	writeTree(t, root, n)
	if code, out, _ := run("--json"); code != 7 || !strings.Contains(out, `"status": "waiting"`) {
		t.Fatalf("waiting: %d %q", code, out)
	}
	for _, k := range n.Children {
		k.Waiting = ""
		k.Attempts = k.MaxAttempts
	}
	writeTree(t, root, n)
	if code, out, _ := run(); code != 3 || !strings.Contains(out, "\nnext       node n000001 has no attempts left (3/3)") {
		t.Fatalf("stuck: %d %q", code, out)
	}
	if code, out, _ := run("--json"); code != 3 || !strings.Contains(out, `"status": "stuck"`) {
		t.Fatalf("stuck, --json: %d %q", code, out)
	}
	for _, k := range n.Children {
		k.Passes = true
	}
	n.Passes = true
	writeTree(t, root, n)
	// Passes written by hand: without a history to audit them against,
	// a runner error; in a repository whose history holds no loop commit
	// for them, open again (with no attempts left here: stuck), and the
	// next step names tree-edit retry.
	if code, _, errs := run(); code != 6 || !strings.Contains(errs, "audit the passed nodes against the run's history") {
		t.Fatalf("complete without history: %d %q", code, errs)
	}
	gittest.Run(t, root, "init", "-q", "-b", "runner/run-b")
	gittest.Run(t, root, "add", "-A")
	gittest.Run(t, root, "commit", "-q", "-m", "passes by hand")
	if code, out, _ := run(); code != 3 || !strings.Contains(out, "unbacked   n000000: passed without a backing loop commit") || !strings.Contains(out, "reopen it with tree-edit retry n000001") {
		t.Fatalf("unbacked passes: %d %q", code, out)
	}
	if err := os.Remove(filepath.Join(root, layout.Tree)); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(); code != 1 || out != "" || !strings.HasPrefix(errs, "runner-status: read .runner/state/tree.json: ") {
		t.Fatalf("no tree: %d %q %q", code, out, errs)
	}
}

// TestStuckPolicySkip: under stuck_policy skip a stuck leaf does not
// stop the selection while another leaf has attempts left; every stuck
// leaf is listed (text and --json); with none left to work the run is
// stuck and the next step speaks of all of them.
func TestStuckPolicySkip(t *testing.T) {
	root := fixture(t, 4, 1)
	cfg := strings.Replace(string(config.DefaultTOML()), "\nstuck_policy = \"stop\"\n", "\nstuck_policy = \"skip\"\n", 1)
	if err := os.WriteFile(filepath.Join(root, layout.Config), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	run := mainIn(root)
	data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
	n, _ := tree.Load(data)
	n.Children[0].Attempts = 3
	writeTree(t, root, n)
	code, out, _ := run()
	for _, line := range []string{
		"\nnode       open n000000/n000002  execute  attempts 0/3  \"Node 2\"\n",
		"\nstuck      n000000/n000001  attempts 3/3  \"Node 1\"\n",
	} {
		if code != 0 || !strings.Contains(out, line) {
			t.Errorf("one stuck: exit %d, no %q in\n%s", code, line, out)
		}
	}
	if strings.Contains(out, "\nnext ") {
		t.Errorf("a next step while the run goes on:\n%s", out)
	}
	for _, k := range n.Children[1:] {
		k.Attempts = 3
	}
	writeTree(t, root, n)
	code, out, _ = run()
	if want := "\nnext       no leaf is left to work but 3 stuck leaves (listed above): give it more with tree-edit retry ID [--attempts N], or split it with tree-edit decompose ID; then runner-loop\n"; code != 3 || !strings.Contains(out, want) {
		t.Errorf("all stuck: exit %d, no %q in\n%s", code, want, out)
	}
	code, out, _ = run("--json")
	var st Status
	if err := json.Unmarshal([]byte(out), &st); code != 3 || err != nil || len(st.StuckLeaves) != 3 || st.StuckLeaves[2] != (runrecord.StuckLeaf{ID: "n000003", Path: "n000000/n000003", Title: "Node 3", Attempts: 3, MaxAttempts: 3}) {
		t.Errorf("--json: exit %d %v %+v", code, err, st.StuckLeaves)
	}
}

// TestMainRuns: --runs lists the records, warns about a broken one, and
// prints an empty list without any.
func TestMainRuns(t *testing.T) {
	root := fixture(t, 3, 1)
	run := mainIn(root)
	code, out, _ := run("--runs")
	if code != 0 || !strings.Contains(out, "\nrun-b   running  2026-01-01T00:00:00Z      1     0/0  $0.0000  .\n") {
		t.Fatalf("--runs: %d %q", code, out)
	}
	code, out, _ = run("--runs", "--json")
	if code != 0 || !strings.HasPrefix(out, "{\n  \"version\": 1,\n  \"runs\": [\n") {
		t.Fatalf("--runs --json: %d %q", code, out)
	}
	if err := os.WriteFile(filepath.Join(root, layout.RunRecord("bad")), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run("--runs"); code != 0 || !strings.HasPrefix(errs, "runner-status: warning: bad.json: ") {
		t.Fatalf("--runs with a broken record: %d %q", code, errs)
	}
	if err := os.RemoveAll(filepath.Join(root, layout.Runs)); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run("--runs", "--json"); code != 0 || out != "{\n  \"version\": 1,\n  \"runs\": []\n}\n" {
		t.Fatalf("--runs without records: %d %q", code, out)
	}
}

// mainIn runs runner-status in root.
func mainIn(root string) func(args ...string) (int, string, string) {
	return func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(append([]string{"-C", root}, args...), strings.NewReader(""), &out, &errb)
		return code, out.String(), errb.String()
	}
}

func writeTree(t *testing.T, root string, n *tree.Node) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, layout.Tree), tree.Encode(n), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadCurrent: an iteration begun and not finished is left unfinished
// while no runner holds the lock, and the iteration in progress (counted
// as the last) while one does; a pending cancel request is read; none of
// it is looked for before any run.
func TestReadCurrent(t *testing.T) {
	root := fixture(t, 3, 1)
	now := time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC)
	dir := filepath.Join(root, layout.IterDir("run-b", 2))
	b := iterdir.Begin{Version: 1, RunID: "run-b", Iteration: 2, NodeID: "n000001", Mode: "execute", Attempts: 1, MaxAttempts: 3, StartedAt: now}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := iterdir.Write(dir, iterdir.BeginFile, b); err != nil {
		t.Fatal(err)
	}
	st, err := Read(root, 5, now, noWarn(t))
	if err != nil {
		t.Fatal(err)
	}
	if st.Running != nil || st.unfinished != 2 || st.Iteration.Last != 1 || st.Cancel != nil ||
		st.NextStep != "iteration 2 was left unfinished (no runner works on it): runner-step or runner-loop recovers it first" {
		t.Fatalf("unfinished: running %+v, unfinished %d, last %d, cancel %+v, next %q", st.Running, st.unfinished, st.Iteration.Last, st.Cancel, st.NextStep)
	}
	lock, err := os.OpenFile(filepath.Join(root, layout.Lock), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, layout.Cancel), []byte("by=\"runner-ui\" pid=7 at=2026-01-01T00:59:00Z\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err = Read(root, 5, now, noWarn(t)); err != nil {
		t.Fatal(err)
	}
	if st.Running == nil || st.Running.Iteration != 2 || st.Running.Attempt != 2 || st.unfinished != 0 || st.Iteration.Last != 2 ||
		st.Cancel == nil || st.Cancel.By != "runner-ui" || st.Cancel.PID != 7 || st.NextStep != "" {
		t.Fatalf("in progress: running %+v, unfinished %d, last %d, cancel %+v, next %q", st.Running, st.unfinished, st.Iteration.Last, st.Cancel, st.NextStep)
	}
	// Before any run: the cancel file is read, the iterations are not.
	if err := os.WriteFile(filepath.Join(root, layout.RunState), runstate.Encode(runstate.New("")), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err = Read(root, 5, now, noWarn(t)); err != nil {
		t.Fatal(err)
	}
	if st.RunID != "" || st.Running != nil || st.unfinished != 0 || st.Cancel == nil {
		t.Fatalf("no run: run %q, running %+v, unfinished %d, cancel %+v", st.RunID, st.Running, st.unfinished, st.Cancel)
	}
}

// noWarn is Read's warn for a run whose records all read: any warning
// fails the test.
func noWarn(t *testing.T) func(format string, args ...any) {
	return func(format string, args ...any) {
		t.Helper()
		t.Errorf("unexpected warning: "+format, args...)
	}
}
