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
	for _, c := range []struct {
		code         int
		sel, stdout  string
		reason, mode string
	}{
		// exit 2 without status=complete: a crash, never a complete tree.
		{2, "panic: runtime error", "", "", ""},
		{0, "status=open id=a path=a next=execute attempts=0/3", "", "", "execute"},
		{2, "status=complete", "step: status=complete\n", "the tree is complete", ""},
		{3, "status=stuck id=a path=a next=execute attempts=3/3", "step: status=stuck id=a path=a next=execute attempts=3/3\n", "id=a path=a next=execute attempts=3/3", ""},
		{7, "status=waiting id=a path=a next=execute attempts=0/3", "step: status=waiting id=a path=a next=execute attempts=0/3\n", "every open leaf waits for an operator's answer (tree-edit answer)", ""},
		{1, "", "", "", ""},
	} {
		s, out, _ := testStep(t)
		s.sel = plumbing.Ended(c.code, c.sel+"\n", "")
		want := c.code
		if c.code == exit.Complete && c.sel != "status=complete" {
			want = exit.RunnerError
		}
		if code := s.selection(); code != want || out.String() != c.stdout || s.facts["end_reason"] != c.reason || s.facts["mode"] != c.mode {
			t.Errorf("tree-select exit %d: %d %q %+v", c.code, code, out.String(), s.facts)
		}
	}
}

// TestNeeds: runner-check's first problem, and how many more.
func TestNeeds(t *testing.T) {
	s, _, errs := testStep(t)
	s.runnerCheck = plumbing.Ended(1, "config: ok\nagent: the agent's program x: not found\nguard: skipped: config invalid\nbudget: no\n", "")
	if code := s.needs(); code != exit.Negative {
		t.Fatalf("needs: %d", code)
	}
	if want := "runner-step: not starting an iteration: agent: the agent's program x: not found (and 1 more: run runner-check)\n"; errs.String() != want {
		t.Errorf("needs: %q, want %q", errs.String(), want)
	}
	s, _, errs = testStep(t)
	s.runnerCheck = plumbing.Ended(6, "", "runner-check: broke\n")
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
