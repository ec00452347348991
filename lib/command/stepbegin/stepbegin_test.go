package stepbegin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/runcheck"
	"github.com/treeloop/treeloop/lib/tree"
)

func testStep(t *testing.T) (*step, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errs bytes.Buffer
	env := &cli.Env{Name: "step-begin", Stdout: &out, Stderr: &errs, Dir: t.TempDir()}
	s := newStep(env, 1)
	t.Cleanup(s.in.Stop)
	return s, &out, &errs
}

// TestSelection: tree-select's answers, each as runner-step says it.
func TestSelection(t *testing.T) {
	leaf := &tree.Node{ID: "a", Next: "execute", Attempts: 3, MaxAttempts: 3}
	for _, c := range []struct {
		code         int
		sel          tree.Selection
		stdout       string
		reason, mode string
	}{
		// An end-of-run exit without a selection: a crash, never a complete tree.
		{2, tree.Selection{}, "", "", ""},
		{3, tree.Selection{}, "", "", ""},
		{0, tree.Selection{Status: tree.StatusOpen, Node: leaf, Path: "a"}, "", "", "execute"},
		{2, tree.Selection{Status: tree.StatusComplete}, "step: status=complete\n", "the tree is complete", ""},
		{3, tree.Selection{Status: tree.StatusStuck, Node: leaf, Path: "a"}, "step: status=stuck id=a path=a next=execute attempts=3/3\n", "id=a path=a next=execute attempts=3/3", ""},
		{7, tree.Selection{Status: tree.StatusWaiting, Node: leaf, Path: "a"}, "step: status=waiting id=a path=a next=execute attempts=3/3\n", "every open leaf waits for an operator's answer (tree-edit answer)", ""},
		{1, tree.Selection{}, "", "", ""},
		{6, tree.Selection{}, "", "", ""},
	} {
		s, out, _ := testStep(t)
		s.sel = plumbing.Done(c.code, c.sel, "")
		want := c.code
		if c.sel.Status == "" && (c.code == exit.Complete || c.code == exit.Stuck) {
			want = exit.RunnerError
		}
		if code := s.selection(); code != want || out.String() != c.stdout || s.facts["end_reason"] != c.reason || s.facts["mode"] != c.mode {
			t.Errorf("tree-select exit %d: %d %q %+v", c.code, code, out.String(), s.facts)
		}
	}
}

// TestNeeds: runner-check's first problem, and how many more; a note or
// a skipped check is none.
func TestNeeds(t *testing.T) {
	s, _, errs := testStep(t)
	s.runnerCheck = plumbing.Done(1, runcheck.Report{Checks: []runcheck.Result{
		{Name: "config", OK: true, Notes: []string{"unconfined guard"}},
		{Name: "agent", Problems: []string{"the agent's program x: not found"}},
		{Name: "guard", Skipped: "config invalid"},
		{Name: "budget", Problems: []string{"no"}},
	}}, "")
	if code := s.needs(); code != exit.Negative {
		t.Fatalf("needs: %d", code)
	}
	if want := "runner-step: not starting an iteration: agent: the agent's program x: not found (and 1 more: run runner-check)\n"; errs.String() != want {
		t.Errorf("needs: %q, want %q", errs.String(), want)
	}
	s, _, errs = testStep(t)
	s.runnerCheck = plumbing.Done(6, runcheck.Report{}, "runner-check: broke\n")
	if code := s.needs(); code != 6 || errs.String() != "runner-check: broke\n" {
		t.Errorf("needs, exit 6: %d %q", code, errs.String())
	}
}

// TestStoppedBeforeIteration: a signal, then the cancel file, end the
// step before an iteration began, removing the iteration allocated.
func TestStoppedBeforeIteration(t *testing.T) {
	s, out, errs := testStep(t)
	dir := filepath.Join(".runner", "iterations", "r", "0001")
	if err := os.MkdirAll(s.env.Abs(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	s.allocated = dir
	s.signaled = exit.SIGTERM
	if code := s.stopped(); code != exit.SIGTERM || out.String() != "step: interrupted reason=SIGTERM\n" ||
		!strings.Contains(errs.String(), "interrupted by SIGTERM before an iteration began") {
		t.Errorf("signaled: %d %q %q", code, out.String(), errs.String())
	}
	if _, err := os.Stat(s.env.Abs(dir)); !os.IsNotExist(err) {
		t.Errorf("the allocated iteration is left: %v", err)
	}
	s, out, errs = testStep(t)
	if code := s.stopped(); code != exit.OK || out.Len() != 0 {
		t.Fatalf("nothing asks to stop: %d %q", code, out.String())
	}
	if err := os.MkdirAll(s.env.Abs(".runner"), 0o755); err != nil {
		t.Fatal(err)
	}
	request := []byte("by=op\tat=now " + strings.Repeat("x", 300) + "\nmore\n")
	if err := os.WriteFile(s.env.Abs(".runner/cancel"), request, 0o644); err != nil {
		t.Fatal(err)
	}
	// Under runner-loop the step leaves the request to the loop, which
	// uses it up and says so.
	t.Setenv("TREELOOP_RECORD", "r1")
	if code := s.stopped(); code != exit.SIGINT || out.String() != "step: interrupted reason=cancel-file\n" || errs.Len() != 0 {
		t.Errorf("cancel file under the loop: %d %q %q", code, out.String(), errs.String())
	}
	if _, err := os.Stat(s.env.Abs(".runner/cancel")); err != nil {
		t.Fatalf("the step under the loop used the request up: %v", err)
	}
	// Alone, the step uses it up, saying who asked (printable, cut).
	os.Unsetenv("TREELOOP_RECORD")
	s, out, errs = testStep(t)
	os.MkdirAll(s.env.Abs(".runner"), 0o755)
	os.WriteFile(s.env.Abs(".runner/cancel"), request, 0o644)
	code := s.stopped()
	line := errs.String()
	if code != exit.SIGINT || out.String() != "step: interrupted reason=cancel-file\n" || s.facts["end_status"] != "canceled" ||
		!strings.HasPrefix(line, "runner-step: stopped by the cancel request (by=opat=now xxx") || !strings.HasSuffix(line, "x), now used up: the next runner-step runs\n") ||
		strings.Count(line, "x") != 200-len("by=opat=now ")+1 {
		t.Errorf("cancel file: %d %q %q %+v", code, out.String(), line, s.facts)
	}
	if _, err := os.Stat(s.env.Abs(".runner/cancel")); !os.IsNotExist(err) {
		t.Errorf("the request is still pending: %v", err)
	}
}
