package runnerstart

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
)

const goalBody = "# Ship it\n\nDo the work.\n"

// repo is a git repository on main with .runner/ set up as runner-init
// leaves it (GOAL.md without a run id, a root leaf, a fresh run state),
// a guard that passes and no sandbox, committed.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	for _, k := range []string{"RUNNER_SANDBOX", "RUNNER_AGENT", "RUNNER_GUARD"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	root := &tree.Node{ID: "root", Title: "Ship it", Goal: "Do the work.", Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 3, Children: []*tree.Node{}}
	files := map[string][]byte{
		layout.Goal:      []byte(goalBody),
		layout.Tree:      tree.Encode(root),
		layout.RunState:  runstate.Encode(runstate.New("")),
		layout.Config:    []byte("[guard]\ncommand = [\"true\"]\n\n[sandbox]\nmode = \"none\"\n"),
		layout.Gitignore: []byte("context/\niterations/\nruns/\nlock\ncancel\nanswers/\nworktrees/\n"),
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "set up treeloop")
	return dir
}

func run(dir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// A goal without an id gets run-<sha8 of its text>: the run starts on
// runner/<id> with its bootstrap commit and a green baseline; started
// again it resumes, committing nothing.
func TestStartThenResume(t *testing.T) {
	dir := repo(t)
	sum := sha256.Sum256([]byte(goalBody))
	id := "run-" + hex.EncodeToString(sum[:4])
	code, out, errs := run(dir)
	if code != exit.OK {
		t.Fatalf("start: exit %d %q %q", code, out, errs)
	}
	head := gittest.Run(t, dir, "rev-parse", "HEAD")
	if want := "started run=" + id + " branch=runner/" + id + " commit=" + head + " baseline=pass\n"; out != want {
		t.Fatalf("start: %q, want %q", out, want)
	}
	if subject := gittest.Run(t, dir, "log", "-1", "--format=%s"); subject != "chore(loop): start run "+id {
		t.Errorf("bootstrap subject %q", subject)
	}
	if branch := gittest.Run(t, dir, "symbolic-ref", "--short", "HEAD"); branch != "runner/"+id {
		t.Errorf("on %s", branch)
	}
	if !strings.Contains(gittest.Run(t, dir, "show", "HEAD:"+layout.Goal), "id: "+id) {
		t.Error("GOAL.md of the bootstrap commit has no run id")
	}
	code, out, errs = run(dir)
	if code != exit.OK || !regexp.MustCompile(`^resumed run=`+id+` branch=runner/`+id+` commit=`+head+`\n$`).MatchString(out) {
		t.Fatalf("resume: exit %d %q %q", code, out, errs)
	}
	if now := gittest.Run(t, dir, "rev-parse", "HEAD"); now != head {
		t.Errorf("resume committed %s", now)
	}
}

// A dirty tree and an invalid run id are refused (exit 1), nothing
// committed; DIR is only for --worktree.
func TestRefusals(t *testing.T) {
	dir := repo(t)
	head := gittest.Run(t, dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "stray.txt"), []byte("x"), 0o644)
	if code, _, errs := run(dir); code != exit.Negative || errs == "" {
		t.Fatalf("dirty: exit %d %q", code, errs)
	}
	os.Remove(filepath.Join(dir, "stray.txt"))
	if code, _, errs := run(dir, "--id", "bad id"); code != exit.Negative || !strings.Contains(errs, `run id "bad id" does not match`) {
		t.Fatalf("bad id: exit %d %q", code, errs)
	}
	if now := gittest.Run(t, dir, "rev-parse", "HEAD"); now != head {
		t.Errorf("a refusal committed %s", now)
	}
	if code, _, errs := run(dir, "somewhere"); code != exit.Usage || !strings.Contains(errs, "DIR (somewhere) is only for --worktree") {
		t.Fatalf("DIR without --worktree: exit %d %q", code, errs)
	}
}

// A generated id whose branch exists gets the next free suffix.
func TestGenerateIDSkipsTakenBranches(t *testing.T) {
	dir := repo(t)
	r, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	first, err := generateID(r, []byte("goal"))
	if err != nil || !regexp.MustCompile(`^run-[0-9a-f]{8}$`).MatchString(first) {
		t.Fatalf("generateID = %q, %v", first, err)
	}
	gittest.Run(t, dir, "branch", "runner/"+first)
	gittest.Run(t, dir, "branch", "runner/"+first+"-2")
	if next, err := generateID(r, []byte("goal")); err != nil || next != first+"-3" {
		t.Fatalf("with two taken: %q, %v", next, err)
	}
}

// The root is unworked only as a leaf with no attempt, not passed, in a
// run that allocated no iteration.
func TestUnworked(t *testing.T) {
	leaf := func() *tree.Node { return &tree.Node{ID: "root", Children: []*tree.Node{}} }
	fresh := runstate.New("r")
	if !unworked(leaf(), fresh) {
		t.Error("a fresh root")
	}
	tried := leaf()
	tried.Attempts = 1
	decomposed := leaf()
	decomposed.Children = []*tree.Node{leaf()}
	later := fresh
	later.NextIter = 2
	for name, c := range map[string]struct {
		root *tree.Node
		rs   runstate.State
	}{"attempted": {tried, fresh}, "decomposed": {decomposed, fresh}, "iterated": {leaf(), later}} {
		if unworked(c.root, c.rs) {
			t.Errorf("%s counts as unworked", name)
		}
	}
}

// A guard that cannot run refuses the start (exit 6, the cause named),
// nothing committed; the next runner-start runs the baseline again and,
// once the guard runs, starts the run. --rebaseline takes a run's
// baseline again; it excludes --no-baseline.
func TestGuardThatCannotRun(t *testing.T) {
	dir := repo(t)
	conf := filepath.Join(dir, filepath.FromSlash(layout.Config))
	os.WriteFile(conf, []byte("[guard]\ncommand = [\"no-such-guard-program\"]\n\n[sandbox]\nmode = \"none\"\n"), 0o644)
	gittest.Run(t, dir, "commit", "-qam", "a guard not installed")
	head := gittest.Run(t, dir, "rev-parse", "HEAD")
	code, out, errs := run(dir, "--id", "r")
	if code != exit.RunnerError || out != "" || !strings.Contains(errs, `runner-start: the guard baseline: the guard could not start: start "no-such-guard-program"`) || !strings.Contains(errs, "then runner-start again") {
		t.Fatalf("cannot run: exit %d %q %q", code, out, errs)
	}
	if now := gittest.Run(t, dir, "rev-parse", "HEAD"); now != head {
		t.Errorf("a refused start committed %s", now)
	}
	code, _, errs = run(dir, "--id", "r")
	if code != exit.RunnerError || !strings.Contains(errs, "no-such-guard-program") {
		t.Fatalf("again, not fixed: exit %d %q", code, errs)
	}
	os.WriteFile(conf, []byte("[guard]\ncommand = [\"true\"]\n\n[sandbox]\nmode = \"none\"\n"), 0o644)
	code, out, errs = run(dir, "--id", "r")
	if code != exit.OK || !regexp.MustCompile(`^resumed run=r branch=runner/r commit=[0-9a-f]{40} baseline=pass\n$`).MatchString(out) {
		t.Fatalf("fixed: exit %d %q %q", code, out, errs)
	}
	if code, out, _ := run(dir, "--id", "r"); code != exit.OK || strings.Contains(out, "baseline=") {
		t.Errorf("resumed after a pass runs no baseline: exit %d %q", code, out)
	}
	if code, out, _ := run(dir, "--id", "r", "--rebaseline"); code != exit.OK || !strings.HasSuffix(out, " baseline=pass\n") {
		t.Errorf("--rebaseline: exit %d %q", code, out)
	}
	if code, _, errs := run(dir, "--rebaseline", "--no-baseline"); code != exit.Usage || !strings.Contains(errs, "--rebaseline and --no-baseline exclude each other") {
		t.Errorf("both: exit %d %q", code, errs)
	}
}
