package runnerrecord

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
)

const at = "2026-03-04T05:06:07Z"

// repo is a repository of run run-r (.runner/runs/ ignored as runner-init
// leaves it) whose hooks each append "<event> <status> <reason>" to
// $root/../hooks.log; on_error's hook fails.
func repo(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "repo")
	put := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	put(layout.Gitignore, "runs/\niterations/\ncontext/\n")
	put(layout.Goal, "# The goal\n\nDo it.\n")
	put(layout.Tree, string(tree.Encode(&tree.Node{ID: "root", Title: "R", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute,
		MaxAttempts: 3, Children: []*tree.Node{}})))
	note := filepath.Join(base, "note")
	if err := os.WriteFile(note, []byte("#!/bin/sh\necho \"$RUNNER_EVENT $RUNNER_STATUS $RUNNER_REASON${RUNNER_ITERATION:+ iter=$RUNNER_ITERATION node=$RUNNER_NODE_ID}\" >> \"$RUNNER_ROOT/../hooks.log\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fail := filepath.Join(base, "fail")
	if err := os.WriteFile(fail, []byte("#!/bin/sh\necho first\necho '  the last line  '\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := string(config.DefaultTOML())
	for _, h := range []string{"on_complete", "on_stuck", "on_limit", "on_iteration"} {
		cfg = strings.Replace(cfg, "\n"+h+" = []", fmt.Sprintf("\n%s = [%q]", h, note), 1)
	}
	cfg = strings.Replace(cfg, "\non_error = []", fmt.Sprintf("\non_error = [%q]", fail), 1)
	put(layout.Config, cfg)
	put(layout.RunState, string(runstate.Encode(runstate.New("run-r"))))
	cmd := exec.Command("git", "init", "-q", root)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return root
}

func run(t *testing.T, root string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("RUNNER_RECORD_NOW", at)
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", root}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func load(t *testing.T, root, id string) runrecord.Record {
	t.Helper()
	r, err := runrecord.Load(filepath.Join(root, layout.RunRecord(id)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func store(t *testing.T, root string, r runrecord.Record) {
	t.Helper()
	r.Version, r.Branch = 1, "runner/"+r.RunID
	if r.StartedAt.IsZero() {
		r.StartedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if runrecord.Finished(r) && r.FinishedAt == nil {
		r.FinishedAt = &r.StartedAt
	}
	if err := runrecord.Save(filepath.Join(root, layout.RunRecord(r.ID)), r); err != nil {
		t.Fatal(err)
	}
}

func hooksLog(t *testing.T, root string) string {
	data, _ := os.ReadFile(filepath.Join(root, "..", "hooks.log"))
	return string(data)
}

// TestBeginNone: no record without a started run, or where git would
// track it.
func TestBeginNone(t *testing.T) {
	root := repo(t)
	if err := os.WriteFile(filepath.Join(root, layout.RunState), runstate.Encode(runstate.State{NextIter: 1}), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(t, root, "begin", "--pid", "7"); code != 0 || out != "record=none\n" {
		t.Errorf("no run id: %d %q", code, out)
	}
	if err := os.Remove(filepath.Join(root, layout.RunState)); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run(t, root, "begin", "--pid", "7"); code != 0 || out != "record=none\n" {
		t.Errorf("no run_state.json: %d %q", code, out)
	}
	root = repo(t)
	if err := os.WriteFile(filepath.Join(root, layout.Gitignore), []byte("iterations/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := run(t, root, "begin", "--pid", "7")
	if code != 0 || out != "record=none\n" || !strings.Contains(errs, ".runner/runs/ is not ignored by git") {
		t.Errorf("runs/ not ignored: %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(root, layout.Runs)); err == nil {
		t.Error("a record was written where git would track it")
	}
}

// TestBeginNew: a new record, running under the pid given on this host,
// with the goal's title, the tree's counts and the time of its start; the
// id after a finished record of the run is the next free <run>.<n>.
func TestBeginNew(t *testing.T) {
	root := repo(t)
	code, out, errs := run(t, root, "begin", "--pid", "4321")
	if code != 0 || out != "record=run-r\n" || errs != "" {
		t.Fatalf("begin: %d %q %q", code, out, errs)
	}
	host, _ := os.Hostname()
	r := load(t, root, "run-r")
	if r.Status != runrecord.Running || r.Runner != (runrecord.Runner{PID: 4321, Host: host}) || r.GoalTitle != "The goal" ||
		r.Branch != "runner/run-r" || r.StartedAt.Format(time.RFC3339) != at || r.Nodes != (runrecord.Nodes{Total: 1, Open: 1}) ||
		r.Iterations != 0 || r.FinishedAt != nil || r.Budgets.MaxIterations != 100 {
		t.Fatalf("record: %+v", r)
	}
	r.Status = runrecord.Stuck
	store(t, root, r)
	store(t, root, runrecord.Record{ID: "run-r.2", RunID: "run-r", Status: runrecord.Complete, Log: []runrecord.Entry{}})
	if code, out, _ := run(t, root, "begin", "--pid", "4321"); code != 0 || out != "record=run-r.3\n" {
		t.Fatalf("after two finished records: %d %q", code, out)
	}
}

// TestBeginRecords: what begin does with each record already there.
func TestBeginRecords(t *testing.T) {
	host, _ := os.Hostname()
	gonePID := 1 << 22
	for _, c := range []struct {
		name     string
		existing runrecord.Record
		pid      int
		id       string // the record begin prints
		status   string // the existing record's status afterwards
		reason   string
		warning  string
	}{
		{"detached, this run", runrecord.Record{ID: "run-r", RunID: "run-r", Status: runrecord.Running, Iterations: 5}, 99,
			"run-r", runrecord.Running, "", ""},
		{"this runner's", runrecord.Record{ID: "run-r", RunID: "run-r", Status: runrecord.Running, Runner: runrecord.Runner{PID: os.Getpid(), Host: host}, Iterations: 5},
			os.Getpid(), "run-r", runrecord.Running, "", ""},
		{"detached, another run", runrecord.Record{ID: "run-q", RunID: "run-q", Status: runrecord.Running}, 99,
			"run-r", runrecord.Interrupted, "a runner started run run-r while this run waited for its next step",
			"run record run-q finalised as interrupted: a runner started run run-r while this run waited for its next step"},
		{"its runner gone", runrecord.Record{ID: "run-r", RunID: "run-r", Status: runrecord.Running, Runner: runrecord.Runner{PID: gonePID, Host: host}}, 99,
			"run-r.2", runrecord.Interrupted, fmt.Sprintf("the runner (pid %d) ended without finishing the run; recovered by the next runner", gonePID),
			fmt.Sprintf("run record run-r finalised as interrupted: the runner (pid %d) ended", gonePID)},
		{"another live runner", runrecord.Record{ID: "run-r", RunID: "run-r", Status: runrecord.Running, Runner: runrecord.Runner{PID: os.Getpid(), Host: host}}, 99,
			"run-r.2", runrecord.Running, "", fmt.Sprintf("run record run-r is running under pid %d on %s; leaving it", os.Getpid(), host)},
		{"another host", runrecord.Record{ID: "run-r", RunID: "run-r", Status: runrecord.Running, Runner: runrecord.Runner{PID: 99, Host: "elsewhere"}}, 99,
			"run-r.2", runrecord.Running, "", "run record run-r is running under pid 99 on elsewhere; leaving it"},
		{"finished", runrecord.Record{ID: "run-r", RunID: "run-r", Status: runrecord.Limit, Reason: "limit"}, 99,
			"run-r.2", runrecord.Limit, "limit", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := repo(t)
			c.existing.Log = []runrecord.Entry{}
			store(t, root, c.existing)
			code, out, errs := run(t, root, "begin", "--pid", fmt.Sprint(c.pid))
			if code != 0 || out != "record="+c.id+"\n" || (c.warning == "") != (errs == "") || !strings.Contains(errs, c.warning) {
				t.Fatalf("begin: %d %q %q", code, out, errs)
			}
			old := load(t, root, c.existing.ID)
			if old.Status != c.status || old.Reason != c.reason {
				t.Errorf("%s afterwards: %s %q", c.existing.ID, old.Status, old.Reason)
			}
			if c.status == runrecord.Interrupted && (old.FinishedAt == nil || old.FinishedAt.Format(time.RFC3339) != at) {
				t.Errorf("finalised without its end: %v", old.FinishedAt)
			}
			opened := load(t, root, c.id)
			if opened.Status != runrecord.Running || opened.Runner != (runrecord.Runner{PID: c.pid, Host: host}) || opened.UpdatedAt.Format(time.RFC3339) != at {
				t.Errorf("%s: %+v", c.id, opened)
			}
			if c.id == c.existing.ID && opened.Iterations != c.existing.Iterations {
				t.Errorf("a re-attached record was refreshed: %d iterations", opened.Iterations)
			}
		})
	}
}

// TestEnd: each status finishes the record with the first line of the
// reason and runs the hook of that status; interrupted and canceled run
// none; a hook that fails is logged, and the command still succeeds.
func TestEnd(t *testing.T) {
	for status, want := range map[string]string{
		runrecord.Complete:    "on_complete complete why\n",
		runrecord.Stuck:       "on_stuck stuck why\n",
		runrecord.Limit:       "on_limit limit why\n",
		runrecord.Interrupted: "",
		runrecord.Canceled:    "",
		runrecord.Error:       "",
		runrecord.Timeout:     "",
	} {
		root := repo(t)
		if code, _, errs := run(t, root, "begin", "--pid", "7"); code != 0 {
			t.Fatalf("begin: %s", errs)
		}
		// The tree changed since begin: end refreshes the counts.
		stuck := &tree.Node{ID: "root", Title: "R", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, Attempts: 3, MaxAttempts: 3, Children: []*tree.Node{}}
		if err := os.WriteFile(filepath.Join(root, layout.Tree), tree.Encode(stuck), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := run(t, root, "end", "--record", "run-r", "--status", status, "--reason", "  why \nmore")
		r := load(t, root, "run-r")
		if code != 0 || out != "" || r.Status != status || r.Reason != "why" || r.FinishedAt == nil || r.FinishedAt.Format(time.RFC3339) != at ||
			r.Nodes != (runrecord.Nodes{Total: 1, Stuck: 1}) {
			t.Errorf("end %s: %d %q %q, record %+v", status, code, out, errs, r)
		}
		if got := hooksLog(t, root); got != want {
			t.Errorf("end %s: hooks ran %q, want %q", status, got, want)
		}
		failing := status == runrecord.Error || status == runrecord.Timeout
		logged := len(r.Log) == 1 && r.Log[0].Kind == "hook_failed" && strings.HasPrefix(r.Log[0].Message, "on_error (") &&
			strings.HasSuffix(r.Log[0].Message, "): exit 3: the last line")
		if failing != logged || failing != strings.Contains(errs, "the run goes on") || !failing && errs != "" {
			t.Errorf("end %s: log %+v, stderr %q", status, r.Log, errs)
		}
		if code, _, errs := run(t, root, "end", "--record", "run-r", "--status", status, "--reason", "again"); code != 6 || !strings.Contains(errs, "is finished") {
			t.Errorf("end of a finished record: %d %q", code, errs)
		}
	}
}

// TestUpdateAndDetach: update refreshes and runs on_iteration, --detach
// clears the runner; detach --failed logs the first line of its reason.
func TestUpdateAndDetach(t *testing.T) {
	root := repo(t)
	if code, _, errs := run(t, root, "begin", "--pid", "7"); code != 0 {
		t.Fatalf("begin: %s", errs)
	}
	if code, _, errs := run(t, root, "update", "--record", "run-r"); code != 0 || errs != "" {
		t.Fatalf("update: %d %q", code, errs)
	}
	if r := load(t, root, "run-r"); r.Runner.PID != 7 || hooksLog(t, root) != "on_iteration running \n" {
		t.Fatalf("update: %+v, hooks %q", r.Runner, hooksLog(t, root))
	}
	if code, _, _ := run(t, root, "update", "--record", "run-r", "--detach"); code != 0 {
		t.Fatal("update --detach failed")
	}
	if r := load(t, root, "run-r"); r.Runner != (runrecord.Runner{}) || r.Status != runrecord.Running {
		t.Fatalf("update --detach: %+v", r)
	}
	run(t, root, "begin", "--pid", "8")
	if code, _, _ := run(t, root, "detach", "--record", "run-r", "--failed", " runner-step exit 6 \nmore"); code != 0 {
		t.Fatal("detach failed")
	}
	r := load(t, root, "run-r")
	if r.Runner != (runrecord.Runner{}) || len(r.Log) != 1 || r.Log[0].Kind != "step_failed" || r.Log[0].Message != "runner-step exit 6" {
		t.Fatalf("detach --failed: %+v %+v", r.Runner, r.Log)
	}
	run(t, root, "detach", "--record", "run-r")
	if r := load(t, root, "run-r"); len(r.Log) != 1 || r.Status != runrecord.Running {
		t.Fatalf("detach: %+v", r)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"update", "--record", "a b"}, 80, `--record "a b" is not a record id`},
		{[]string{"detach", "--record", "missing"}, 6, "read the run record"},
	} {
		if code, _, errs := run(t, root, c.args...); code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: %d %q", c.args, code, errs)
		}
	}
}

func TestHookFor(t *testing.T) {
	for status, want := range map[string]string{
		runrecord.Complete: "on_complete", runrecord.Stuck: "on_stuck", runrecord.Limit: "on_limit",
		runrecord.Error: "on_error", runrecord.Timeout: "on_error", runrecord.Interrupted: "", runrecord.Canceled: "",
	} {
		if got := hookFor(status); got != want {
			t.Errorf("hookFor(%s) = %q, want %q", status, got, want)
		}
	}
	if got := oneLine("\n\n  first  \nsecond"); got != "first" {
		t.Errorf("oneLine: %q", got)
	}
}

// TestEndBrokenRepository: a run that ended because its repository broke
// still ends its record, with what it had and a warning.
func TestEndBrokenRepository(t *testing.T) {
	root := repo(t)
	if code, _, errs := run(t, root, "begin", "--pid", "7"); code != 0 {
		t.Fatalf("begin: %s", errs)
	}
	if err := os.WriteFile(filepath.Join(root, layout.Tree), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, root, "end", "--record", "run-r", "--status", runrecord.Error, "--reason", "broken")
	if r := load(t, root, "run-r"); code != 0 || r.Status != runrecord.Error || r.Nodes != (runrecord.Nodes{Total: 1, Open: 1}) ||
		!strings.HasPrefix(errs, "runner-record: warning: refresh the run record: ") {
		t.Fatalf("end: %d %q %+v", code, errs, r)
	}
}

// TestHookEnvironmentAndTimeout: a hook sees the last iteration of the
// record; one that outlives hooks.timeout_secs is stopped and logged.
func TestHookEnvironmentAndTimeout(t *testing.T) {
	root := repo(t)
	cfg, err := os.ReadFile(filepath.Join(root, layout.Config))
	if err != nil {
		t.Fatal(err)
	}
	sleeper := filepath.Join(root, "..", "sleeper")
	if err := os.WriteFile(sleeper, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := strings.Replace(string(cfg), "\ntimeout_secs = 30", "\ntimeout_secs = 1", 1)
	c = regexp.MustCompile(`\non_limit = \[[^]]*\]`).ReplaceAllString(c, fmt.Sprintf("\non_limit = [%q]", sleeper))
	if c == string(cfg) || !strings.Contains(c, "timeout_secs = 1\n") {
		t.Fatal("the hooks table did not change")
	}
	if err := os.WriteFile(filepath.Join(root, layout.Config), []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	store(t, root, runrecord.Record{ID: "run-r", RunID: "run-r", Status: runrecord.Running, LastIteration: &runrecord.LastIter{Iter: 3, NodeID: "n.1"}, Log: []runrecord.Entry{}})
	run(t, root, "end", "--record", "run-r", "--status", runrecord.Complete, "--reason", "done")
	if got := hooksLog(t, root); got != "on_complete complete done iter=3 node=n.1\n" {
		t.Errorf("hook environment: %q", got)
	}
	store(t, root, runrecord.Record{ID: "run-r.2", RunID: "run-r", Status: runrecord.Running, Log: []runrecord.Entry{}})
	start := time.Now()
	code, _, errs := run(t, root, "end", "--record", "run-r.2", "--status", runrecord.Limit, "--reason", "limit")
	r := load(t, root, "run-r.2")
	if code != 0 || len(r.Log) != 1 || r.Log[0].Kind != "hook_timeout" || r.Log[0].Message != "on_limit ("+sleeper+"): still running after 1s (hooks.timeout_secs): stopped" ||
		!strings.Contains(errs, "the run goes on") || time.Since(start) > 30*time.Second {
		t.Fatalf("hook timeout: %d %q %+v", code, errs, r.Log)
	}
}

// TestEndExit: end --exit takes the status from the porcelain's exit
// code; runner-step's committed iterations and refusals leave the record
// running without a runner (a refusal logged), and a record already
// detached is not written again.
func TestEndExit(t *testing.T) {
	root := repo(t)
	run(t, root, "begin", "--pid", "7")
	if code, _, errs := run(t, root, "end", "--record", "run-r", "--by", "runner-step", "--exit", "5"); code != 0 || errs != "" {
		t.Fatalf("end --exit 5: %d %q", code, errs)
	}
	if r := load(t, root, "run-r"); r.Runner != (runrecord.Runner{}) || r.Status != runrecord.Running || len(r.Log) != 0 {
		t.Fatalf("end --exit 5: %+v", r)
	}
	path := filepath.Join(root, layout.RunRecord("run-r"))
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// An already detached record needs no write (an atomic write would
	// replace the file).
	code, _, errs := run(t, root, "end", "--record", "run-r", "--by", "runner-step", "--exit", "0")
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || errs != "" || !os.SameFile(before, after) {
		t.Fatalf("end --exit 0 on a detached record: %d %q, rewritten %v", code, errs, !os.SameFile(before, after))
	}
	run(t, root, "begin", "--pid", "7")
	if code, _, _ := run(t, root, "end", "--record", "run-r", "--by", "runner-step", "--exit", "1"); code != 0 {
		t.Fatal("end --exit 1 failed")
	}
	if r := load(t, root, "run-r"); r.Runner != (runrecord.Runner{}) || r.Status != runrecord.Running || len(r.Log) != 1 || r.Log[0].Message != "runner-step exit 1" {
		t.Fatalf("end --exit 1: %+v", r)
	}
	// The detached record ends under the step that ended it (a signal
	// after its refresh had detached it).
	if code, _, _ := run(t, root, "end", "--record", "run-r", "--by", "runner-step", "--exit", "130", "--status", "canceled", "--pid", "9"); code != 0 {
		t.Fatal("end --exit 130 --status canceled failed")
	}
	host, _ := os.Hostname()
	if r := load(t, root, "run-r"); r.Status != runrecord.Canceled || r.Reason != "runner-step ended with exit 130" || r.Runner != (runrecord.Runner{PID: 9, Host: host}) {
		t.Fatalf("end --exit 130 --status canceled --pid 9: %+v", r)
	}
	// A record with its runner keeps it: --pid names only a detached one.
	root2 := repo(t)
	run(t, root2, "begin", "--pid", "7")
	run(t, root2, "end", "--record", "run-r", "--exit", "130", "--pid", "9")
	if r := load(t, root2, "run-r"); r.Runner.PID != 7 || r.Status != runrecord.Interrupted {
		t.Fatalf("end --pid 9 of a record under pid 7: %+v", r)
	}
	root = repo(t)
	run(t, root, "begin", "--pid", "7")
	if code, _, _ := run(t, root, "end", "--record", "run-r", "--exit", "6", "--reason", "iteration 3: broke"); code != 0 {
		t.Fatal("end --exit 6 failed")
	}
	if r := load(t, root, "run-r"); r.Status != runrecord.Error || r.Reason != "iteration 3: broke" {
		t.Fatalf("runner-loop exit 6: %+v", r)
	}
	for _, args := range [][]string{{"--status", "complete"}, {"--reason", "why"}, {"--status", "done", "--reason", "why"}} {
		if code, _, _ := run(t, root, append([]string{"end", "--record", "run-r"}, args...)...); code != 80 {
			t.Errorf("end %v: exit %d, want 80", args, code)
		}
	}
}
