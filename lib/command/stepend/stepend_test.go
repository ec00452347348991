package stepend

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/iterlog"
	"github.com/treeloop/treeloop/lib/command/treeupdate"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/internal/runtest"
	"github.com/treeloop/treeloop/lib/iterdir"
)

func ptr(n int) *int { return &n }

// TestJudge: what the session's exits make of the iteration, as
// runner-step's table had it.
func TestJudge(t *testing.T) {
	for _, c := range []struct {
		name      string
		agent     *int
		done      bool
		guardExit *int
		signal    int
		want      verdict
	}{
		{"context-write failed", nil, false, nil, 0, verdict{"agent", "skipped", 0, "context-write failed"}},
		{"not done", ptr(0), false, nil, 0, verdict{"agent", "skipped", 0, ""}},
		{"agent error", ptr(5), false, nil, 0, verdict{"agent", "skipped", 5, ""}},
		{"paused", ptr(8), false, nil, 0, verdict{"paused", "skipped", 8, ""}},
		{"agent timeout", ptr(124), true, nil, 0, verdict{"timeout", "skipped", 124, ""}},
		{"agent SIGTERM", ptr(143), true, nil, 143, verdict{"interrupted", "skipped", 143, ""}},
		{"agent-exec broke", ptr(2), true, nil, 0, verdict{"agent", "skipped", 0, "agent-exec failed (exit 2)"}},
		{"guard pass", ptr(0), true, ptr(0), 0, verdict{"agent", "pass", 0, ""}},
		{"guard fail", ptr(0), true, ptr(1), 0, verdict{"agent", "fail", 0, ""}},
		{"guard timeout", ptr(0), true, ptr(124), 0, verdict{"timeout", "skipped", 124, ""}},
		{"guard SIGINT", ptr(0), true, ptr(130), 130, verdict{"interrupted", "skipped", 130, ""}},
		{"guard-run broke", ptr(0), true, ptr(6), 0, verdict{"agent", "skipped", 0, "guard-run failed (exit 6)"}},
		{"no guard after SIGTERM", ptr(0), true, nil, 143, verdict{"interrupted", "skipped", 143, ""}},
		{"no guard after the cancel file", ptr(0), true, nil, 0, verdict{"interrupted", "skipped", 130, ""}},
	} {
		if got := judge(c.agent, c.done, c.guardExit, c.signal); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func testStep(t *testing.T, signaled int) (*step, *bytes.Buffer) {
	t.Helper()
	var out, errs bytes.Buffer
	env := &cli.Env{Name: "step-end", Stdout: &out, Stderr: &errs, Dir: t.TempDir()}
	s := &step{env: env, in: cli.NotifyInterrupt(), signaled: signaled, facts: map[string]string{}}
	t.Cleanup(s.in.Stop)
	return s, &errs
}

// TestFinish: a signal ends the step as interrupted after what it
// committed; the record's end says why.
func TestFinish(t *testing.T) {
	const line = "run=r iter=1 node=a status=done guard=pass"
	for _, c := range []struct {
		final, signal, want int
		status, reason      string
	}{
		{0, 0, 0, "", ""},
		{5, 0, 5, "", ""},
		{8, 0, 8, "", ""},
		{0, 130, 130, "", "interrupted by SIGINT: " + line},
		{5, 143, 143, "", "interrupted by SIGTERM: " + line},
		{8, 143, 8, "", ""},
		{6, 130, 6, "", ""},
		{124, 130, 124, "", "the iteration timed out: " + line},
		{130, 143, 143, "", "interrupted by SIGTERM: " + line},
		{130, 0, 130, "canceled", "canceled by .runner/cancel: " + line},
	} {
		s, _ := testStep(t, c.signal)
		if got := s.finish(c.final, line); got != c.want || s.facts["end_status"] != c.status || s.facts["end_reason"] != c.reason {
			t.Errorf("final %d, signal %d: %d %+v", c.final, c.signal, got, s.facts)
		}
	}
	// The cancel that stopped a step run alone is used up; under
	// runner-loop the loop uses it up.
	for _, underLoop := range []bool{false, true} {
		if underLoop {
			t.Setenv("TREELOOP_RECORD", "r1")
		}
		s, errs := testStep(t, 0)
		os.MkdirAll(s.env.Abs(".runner"), 0o755)
		os.WriteFile(s.env.Abs(".runner/cancel"), []byte("by=\"ops\" pid=1 at=2026-01-02T03:04:05Z\n"), 0o644)
		s.finish(130, line)
		_, err := os.Stat(s.env.Abs(".runner/cancel"))
		switch {
		case underLoop && (err != nil || errs.Len() != 0):
			t.Errorf("under the loop: %v %q", err, errs.String())
		case !underLoop && (!os.IsNotExist(err) || errs.String() != "runner-step: stopped by the cancel request (by=\"ops\" pid=1 at=2026-01-02T03:04:05Z), now used up: the next runner-step runs\n"):
			t.Errorf("alone: %v %q", err, errs.String())
		}
	}
	for _, c := range []int{0, 5, 8} {
		if !goesOn(c) {
			t.Errorf("exit %d goes on", c)
		}
	}
	if goesOn(6) || goesOn(130) {
		t.Error("a runner error or an interrupt lets the run go on")
	}
}

// TestRestoreLogsOnly: a runner error that is not a session's (context-write
// failed) is logged, and nothing is put back.
func TestRestoreLogsOnly(t *testing.T) {
	s, errs := testStep(t, 0)
	dir := "iter"
	if err := os.Mkdir(s.env.Abs(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	o := &Options{Iter: dir}
	if code := s.restore(o, "context-write failed"); code != exit.OK || errs.Len() != 0 {
		t.Fatalf("restore: %d %q", code, errs.String())
	}
	if code := s.restore(o, "context-write failed"); code != exit.OK {
		t.Fatalf("restore again: %d", code)
	}
	data, _ := os.ReadFile(filepath.Join(s.env.Abs(dir), runnerErrorLog))
	if string(data) != "context-write failed\ncontext-write failed\n" {
		t.Errorf("runner_error.log: %q", data)
	}
}

// TestRestoreFails: agent-exec's restore that cannot run leaves the
// iteration uncommitted, saying so (exit 6).
func TestRestoreFails(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	s, errs := testStep(t, 0)
	if err := os.Mkdir(s.env.Abs("iter"), 0o755); err != nil {
		t.Fatal(err)
	}
	code := s.restore(&Options{Iter: "iter"}, "agent-exec failed (exit 2)")
	if code != exit.RunnerError || !strings.Contains(errs.String(), "runner-step: cannot put back what the session changed; the iteration in iter is not committed") {
		t.Errorf("restore: %d %q", code, errs.String())
	}
	data, _ := os.ReadFile(filepath.Join(s.env.Abs("iter"), runnerErrorLog))
	if !strings.HasPrefix(string(data), "agent-exec failed (exit 2)\n") || !strings.Contains(string(data), "agent-exec") {
		t.Errorf("runner_error.log: %q", data)
	}
}

// TestRefreshRefusesBadID: a record id that is not one is said as
// runner-record says it, and the record is not detached.
func TestRefreshRefusesBadID(t *testing.T) {
	s, errs := testStep(t, 0)
	if s.refresh("../x", true) || errs.String() != "runner-record: --record \"../x\" is not a record id\n" {
		t.Errorf("refresh: %q", errs.String())
	}
}

// TestUpdateOptionsAsParsed: the options step-end calls tree-update's
// core with are what tree-update's own command line makes of the same
// flags, defaults included.
func TestUpdateOptionsAsParsed(t *testing.T) {
	o := &Options{Iter: ".runner/iterations/r/0001"}
	o.Base.Base = "abc123"
	for _, v := range []verdict{{outcome: outcomeAgent, guard: "pass"}, {outcome: outcomeInterrupted, guard: "skipped"}} {
		var parsed treeupdate.Options
		parser, err := kong.New(&parsed, kong.Exit(func(int) { t.Fatal("kong exited") }))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parser.Parse([]string{"--iter", o.Iter, "--base", "abc123", "--selected", "n1", "--guard", v.guard, "--outcome", v.outcome}); err != nil {
			t.Fatal(err)
		}
		if got := updateOptions(o, "n1", &v); !reflect.DeepEqual(*got, parsed) {
			t.Errorf("in process %+v\nparsed     %+v", *got, parsed)
		}
	}
}

// TestBeganOn: the node is begin.json's; a --selected that differs, or
// a begin.json that names none, is refused.
func TestBeganOn(t *testing.T) {
	dir := t.TempDir()
	if _, err := beganOn(dir, ""); err == nil {
		t.Error("no begin.json: accepted")
	}
	if err := iterdir.Write(dir, iterdir.BeginFile, iterdir.Begin{Version: 1, NodeID: "a.b"}); err != nil {
		t.Fatal(err)
	}
	if node, err := beganOn(dir, ""); node != "a.b" || err != nil {
		t.Errorf("begin.json's node: %q %v", node, err)
	}
	if node, err := beganOn(dir, "a.b"); node != "a.b" || err != nil {
		t.Errorf("the same --selected: %q %v", node, err)
	}
	if _, err := beganOn(dir, "a.c"); err == nil || !strings.Contains(err.Error(), "began on node a.b") {
		t.Errorf("another --selected: %v", err)
	}
	if err := iterdir.Write(dir, iterdir.BeginFile, iterdir.Begin{Version: 1, NodeID: "../x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := beganOn(dir, ""); err == nil {
		t.Error("an invalid node id: accepted")
	}
}

// runnerRepo makes the step's directory a repository in which run r1 has
// started (runtest.Repo), and allocates the run's first iteration on leaf
// a (iter-log begin). It returns the iteration's directory and the step's
// base.
func runnerRepo(t *testing.T, s *step) (string, string) {
	t.Helper()
	runtest.Repo(t, s.env.Dir)
	began, err := (&iterlog.BeginCmd{Selected: "a"}).Begin(s.env)
	if err != nil {
		t.Fatal(err)
	}
	return began.Dir, gittest.Run(t, s.env.Dir, "rev-parse", "HEAD")
}

// TestEndAgentError: a session that ended without an output is judged an
// agent error by tree-update: the iteration is committed as one and the
// step exits 5, which the loop and the run record count as such.
func TestEndAgentError(t *testing.T) {
	s, errs := testStep(t, 0)
	iter, base := runnerRepo(t, s)
	o := &Options{Iter: iter, AgentExit: ptr(exit.OK)}
	o.Base.Base = base
	if code := s.end(o); code != exit.AgentError {
		t.Fatalf("step-end: exit %d, want %d: %q", code, exit.AgentError, errs.String())
	}
	var m iterdir.Meta
	if err := iterdir.Read(s.env.Abs(iter), iterdir.MetaFile, &m); err != nil || m.Result != "agent-error" || m.Commit != gittest.Run(t, s.env.Dir, "rev-parse", "HEAD") {
		t.Errorf("meta.json %+v (%v)", m, err)
	}
}
