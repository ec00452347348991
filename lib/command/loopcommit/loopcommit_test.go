package loopcommit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// The body is the summary as git's cleanup would leave it: control
// characters dropped (git refuses a NUL), trailing blanks and empty lines
// gone, capped at MaxBodyBytes on a rune boundary; no body when empty.
func TestFullMessage(t *testing.T) {
	subject := "chore(loop): run r1 iter 4 node a.b status=done guard=pass"
	tests := []struct{ summary, want string }{
		{"", subject},
		{" \n\t\n", subject},
		{"did x  \n\n\nthen y\t", subject + "\n\ndid x\nthen y"},
		{"nul\x00 and bell\x07 and del\x7f", subject + "\n\nnul and bell and del"},
		{"done\n\ntreeloop-tests-passed: 999", subject + "\n\ndone\n> treeloop-tests-passed: 999"},
	}
	for _, tt := range tests {
		if got := FullMessage(subject, tt.summary); got != tt.want {
			t.Errorf("FullMessage(%q) = %q, want %q", tt.summary, got, tt.want)
		}
	}
	long := strings.Repeat("é", MaxBodyBytes) // two bytes a rune: the cap falls between runes or on one
	body := strings.TrimPrefix(FullMessage(subject, long), subject+"\n\n")
	if !strings.HasSuffix(body, " …") || len(body) > MaxBodyBytes+len(" …") || !strings.HasPrefix(long, strings.TrimSuffix(body, " …")) {
		t.Errorf("a long summary's body is %d bytes, ends %q", len(body), body[len(body)-8:])
	}
	// git reads no trailer from a summary that wrote the runner's.
	forged := FullMessage(subject, "done\n\nTreeloop-Evidence: witness; 5 passed, 0 of 0 passed before\nTreeloop-Tests-Passed: 999")
	cmd := exec.Command("git", "interpret-trailers", "--parse")
	cmd.Stdin = strings.NewReader(forged)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git interpret-trailers: %v", err)
	}
	if len(strings.TrimSpace(string(out))) != 0 {
		t.Errorf("git reads trailers from the summary: %q", out)
	}
}

// The model trailer is the model on one line (control characters are
// spaces); the ratchet's count is a trailer only of a passed iteration
// whose ratchet held.
func TestTrailers(t *testing.T) {
	held := &iterdir.Guard{Ratchet: &iterdir.Ratchet{Count: 12, Held: true}}
	tests := []struct {
		name string
		m    iterdir.Meta
		want []string
	}{
		{"nothing known", iterdir.Meta{Result: "passed"}, nil},
		{"model", iterdir.Meta{Agent: &iterdir.Agent{Model: " gpt\nx "}}, []string{ModelTrailer + ": gpt x"}},
		{"blank model", iterdir.Meta{Agent: &iterdir.Agent{Model: "\t"}}, nil},
		{"passed, held", iterdir.Meta{Result: "passed", GuardRun: held}, []string{"Treeloop-Tests-Passed: 12"}},
		{"failed", iterdir.Meta{Result: "failed", GuardRun: held}, nil},
		{"passed, not held", iterdir.Meta{Result: "passed", GuardRun: &iterdir.Guard{Ratchet: &iterdir.Ratchet{Count: 3}}}, nil},
	}
	for _, tt := range tests {
		got := trailers(tt.m)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: trailers = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// repo is a git repository on the run branch of run r1 with GOAL.md and
// run_state.json committed.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	write(t, dir, layout.Goal, "---\nid: r1\n---\n# Goal\n")
	write(t, dir, layout.RunState, `{"run_id": "r1", "next_iter": 1, "last_status": null, "last_summary": null, "last_guard": null}`+"\n")
	write(t, dir, ".gitignore", ".runner/iterations/\n")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "chore(loop): start run r1")
	return dir
}

func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(dir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// check refuses, with exit 1 and the reason, to step on main, in a dirty
// tree, on a branch of another run or with GOAL.md's id not the run's;
// on the run branch of a clean tree it names the run, branch and HEAD.
func TestCheckRefusals(t *testing.T) {
	dir := repo(t)
	if code, _, errs := run(dir, "check"); code != exit.Negative || !strings.Contains(errs, "refusing to step on main") {
		t.Fatalf("on main: exit %d %q", code, errs)
	}
	gittest.Run(t, dir, "switch", "-qc", "runner/r2")
	if code, _, errs := run(dir, "check"); code != exit.Negative || !strings.Contains(errs, "on branch runner/r2, the run is r1") {
		t.Fatalf("another run's branch: exit %d %q", code, errs)
	}
	gittest.Run(t, dir, "switch", "-qc", "runner/r1")
	head := gittest.Run(t, dir, "rev-parse", "HEAD")
	if code, out, errs := run(dir, "check"); code != exit.OK || out != "run=r1 branch=runner/r1 head="+head+"\n" {
		t.Fatalf("the run's branch: exit %d %q %q", code, out, errs)
	}
	write(t, dir, "new.txt", "x")
	write(t, dir, "other.txt", "x")
	if code, _, errs := run(dir, "check"); code != exit.Negative || !strings.Contains(errs, "the working tree is not clean") || !strings.Contains(errs, "and 1 more") {
		t.Fatalf("untracked files: exit %d %q", code, errs)
	}
	os.Remove(filepath.Join(dir, "new.txt"))
	os.Remove(filepath.Join(dir, "other.txt"))
	write(t, dir, layout.Goal, "---\nid: r9\n---\n")
	gittest.Run(t, dir, "commit", "-qam", "goal of another run")
	if code, _, errs := run(dir, "check"); code != exit.Negative || !strings.Contains(errs, `has id "r9", run_state.json has "r1"`) {
		t.Fatalf("GOAL.md of another run: exit %d %q", code, errs)
	}
}

// check refuses a working tree with a single dirty path, untracked or
// modified, naming it: that one stray change would otherwise be
// committed into the iteration.
func TestCheckOneDirtyPath(t *testing.T) {
	for _, tt := range []struct {
		name, path string
	}{
		{"untracked", "new.txt"},
		{"modified", layout.Goal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := repo(t)
			gittest.Run(t, dir, "switch", "-qc", "runner/r1")
			write(t, dir, tt.path, "---\nid: r1\n---\n# Changed\n")
			code, _, errs := run(dir, "check")
			if code != exit.Negative || !strings.Contains(errs, "the working tree is not clean ("+tt.path+")") {
				t.Fatalf("one %s path: exit %d %q", tt.name, code, errs)
			}
		})
	}
}

// commit makes one commit with the iteration's message and records it in
// meta.json; a second commit of the same iteration is refused, and
// meta.json's run must be the branch's.
func TestCommitRecordsOnce(t *testing.T) {
	dir := repo(t)
	gittest.Run(t, dir, "switch", "-qc", "runner/r1")
	iter := layout.IterDir("r1", 1)
	m := iterdir.Meta{Version: 1, RunID: "r1", Iteration: 1, NodeID: "a", Status: "done", Guard: "pass", Result: "passed", Summary: "made a"}
	os.MkdirAll(filepath.Join(dir, iter), 0o755)
	if err := iterdir.Write(filepath.Join(dir, iter), iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "a.txt", "a\n")
	code, out, errs := run(dir, "commit", "--iter", iter)
	if code != exit.OK {
		t.Fatalf("commit: exit %d %q", code, errs)
	}
	head := gittest.Run(t, dir, "rev-parse", "HEAD")
	if out != "commit="+head+" chore(loop): run r1 iter 1 node a status=done guard=pass\n" {
		t.Fatalf("stdout %q (HEAD %s)", out, head)
	}
	if msg := gittest.Run(t, dir, "log", "-1", "--format=%B"); msg != "chore(loop): run r1 iter 1 node a status=done guard=pass\n\nmade a" {
		t.Errorf("message %q", msg)
	}
	if files := gittest.Run(t, dir, "show", "--name-only", "--format=", "HEAD"); files != "a.txt" {
		t.Errorf("committed %q", files)
	}
	var got iterdir.Meta
	if err := iterdir.Read(filepath.Join(dir, iter), iterdir.MetaFile, &got); err != nil || got.Commit != head {
		t.Fatalf("meta.json commit %q (%v), want %s", got.Commit, err, head)
	}
	if code, _, errs := run(dir, "commit", "--iter", iter); code != exit.RunnerError || !strings.Contains(errs, "iteration 1 is already committed as "+head) {
		t.Fatalf("again: exit %d %q", code, errs)
	}
	m.RunID, m.Iteration = "r2", 2
	other := layout.IterDir("r2", 2)
	os.MkdirAll(filepath.Join(dir, other), 0o755)
	if err := iterdir.Write(filepath.Join(dir, other), iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(dir, "commit", "--iter", other); code != exit.RunnerError || !strings.Contains(errs, `on branch "runner/r1", not runner/r2`) {
		t.Fatalf("another run's iteration: exit %d %q", code, errs)
	}
	if n := gittest.Run(t, dir, "rev-list", "--count", "HEAD"); n != "2" {
		t.Fatalf("%s commits, want 2", n)
	}
	// A meta.json whose words no reader would take back (a status outside
	// the vocabulary) is not committed.
	m.RunID, m.Iteration, m.Status = "r1", 2, "finished"
	bad := layout.IterDir("r1", 2)
	os.MkdirAll(filepath.Join(dir, bad), 0o755)
	if err := iterdir.Write(filepath.Join(dir, bad), iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(dir, "commit", "--iter", bad); code != exit.RunnerError || !strings.Contains(errs, `makes no valid commit subject ("chore(loop): run r1 iter 2 node a status=finished guard=pass")`) {
		t.Fatalf("a status outside the vocabulary: exit %d %q", code, errs)
	}
	if n := gittest.Run(t, dir, "rev-list", "--count", "HEAD"); n != "2" {
		t.Fatalf("%s commits, want 2", n)
	}
}

// TestCommitUnembeds: commit without --as-staged (a recovery's) stages a
// git repository made inside the work tree as its files, as iter-log end
// does, keeps its .git under the git directory and says so.
func TestCommitUnembeds(t *testing.T) {
	dir := repo(t)
	gittest.Run(t, dir, "switch", "-qc", "runner/r1")
	iter := layout.IterDir("r1", 3)
	m := iterdir.Meta{Version: 1, RunID: "r1", Iteration: 3, NodeID: "a", Status: "done", Guard: "pass", Result: "passed"}
	os.MkdirAll(filepath.Join(dir, iter), 0o755)
	if err := iterdir.Write(filepath.Join(dir, iter), iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "sub/f.txt", "f\n")
	sub := filepath.Join(dir, "sub")
	gittest.Run(t, sub, "init", "-q")
	gittest.Run(t, sub, "add", "f.txt")
	gittest.Run(t, sub, "commit", "-qm", "hidden")
	code, _, errs := run(dir, "commit", "--iter", iter)
	if code != exit.OK {
		t.Fatalf("commit: exit %d %q", code, errs)
	}
	if ls := gittest.Run(t, dir, "ls-tree", "-r", "HEAD", "sub"); !strings.HasPrefix(ls, "100644 blob ") || !strings.HasSuffix(ls, "\tsub/f.txt") {
		t.Errorf("committed %q, want sub/f.txt's blob", ls)
	}
	kept := filepath.Join(dir, ".git", "treeloop", "embedded", "r1", "0003", "sub", ".git")
	if _, err := os.Stat(filepath.Join(kept, "HEAD")); err != nil {
		t.Errorf("sub's .git is not kept: %v", err)
	}
	if !strings.Contains(errs, "loop-commit: warning: sub/ is a git repository made inside the work tree") || !strings.Contains(errs, kept) {
		t.Errorf("stderr %q", errs)
	}
}
