package stepbegin

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/iterlog"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/internal/runtest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
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

// writeFiles writes each file (a path relative to dir) with its data.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// twoLeaves is a root over leaf "a", its attempts used up, and leaf "b",
// open.
func twoLeaves() *tree.Node {
	a := &tree.Node{ID: "a", Order: 1, Title: "A", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, Attempts: 3, MaxAttempts: 3, Children: []*tree.Node{}}
	b := &tree.Node{ID: "b", Order: 2, Title: "B", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 3, Children: []*tree.Node{}}
	return &tree.Node{ID: "root", Title: "R", Goal: "g", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3, Children: []*tree.Node{a, b}}
}

// TestStuckPolicyFromConfig: the step selects under config.toml's
// stuck_policy: with skip, the leaf with no attempts left is passed over
// and the next open one is worked, where stop would end the run stuck.
func TestStuckPolicyFromConfig(t *testing.T) {
	s, out, errs := testStep(t)
	writeFiles(t, s.env.Dir, map[string][]byte{layout.Tree: tree.Encode(twoLeaves()), layout.Config: []byte("stuck_policy = \"skip\"\n")})
	s.firstCommands()
	s.waitFirst()
	if code := s.selection(); code != exit.OK || s.facts["id"] != "b" {
		t.Errorf("selection: %d %q %q %+v", code, out.String(), errs.String(), s.facts)
	}
}

// runnerRepo makes the step's directory a repository in which run r1 has
// started (runtest.Repo), and puts an agent-exec first on PATH whose
// --restore finds nothing to put back.
func runnerRepo(t *testing.T, s *step) {
	t.Helper()
	runtest.Repo(t, s.env.Dir)
	bin := t.TempDir()
	writeFiles(t, bin, map[string][]byte{"agent-exec": []byte("#!/bin/sh\nexit 0\n")})
	if err := os.Chmod(filepath.Join(bin, "agent-exec"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestRecoverInterrupted: an iteration a kill left before tree-update is
// committed as interrupted: the snapshot is put back over the agent's
// edits and no attempt is used, whatever the agent left half written.
func TestRecoverInterrupted(t *testing.T) {
	s, _, errs := testStep(t)
	runnerRepo(t, s)
	began, err := (&iterlog.BeginCmd{Selected: "a"}).Begin(s.env)
	if err != nil {
		t.Fatal(err)
	}
	edited, _ := tree.Load(mustRead(t, s.env.Abs(layout.Tree)))
	n, _ := tree.Find(edited, "a")
	n.Title = "A, retitled by the agent"
	writeFiles(t, s.env.Dir, map[string][]byte{layout.Tree: tree.Encode(edited), "work.txt": []byte("half\n"),
		path.Join(began.Dir, "output.json"): []byte(`{"status": "do`)})
	rec, err := iterdir.Recover(s.env.Dir)
	if err != nil || rec.Action != iterdir.RecoverUpdate {
		t.Fatalf("recovery %+v (%v)", rec, err)
	}
	if code := s.complete(rec); code != exit.OK {
		t.Fatalf("complete: %d %q", code, errs.String())
	}
	var upd iterdir.Update
	if err := iterdir.Read(s.env.Abs(began.Dir), iterdir.UpdateFile, &upd); err != nil || upd.Result != "interrupted" || upd.Attempts != 0 {
		t.Errorf("update.json %+v (%v)", upd, err)
	}
	committed, _ := tree.Load([]byte(gittest.Run(t, s.env.Dir, "show", "HEAD:"+layout.Tree)))
	if n, _ := tree.Find(committed, "a"); n == nil || n.Title != "A" || n.Attempts != 0 {
		t.Errorf("committed leaf a: %+v", n)
	}
}

// mustRead is the file at path; one that cannot be read fails the test.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
