package runnerinit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	t.Setenv("RUNNER_SANDBOX", "none")
	t.Setenv("RUNNER_AGENT", "")
	gittest.Run(t, dir, "init", "-q")
	return dir
}

func run(dir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The first run creates every file, the tree's root from the goal's
// heading and body; a second keeps them all but the schema copies, which
// are put back when they differ.
func TestIdempotent(t *testing.T) {
	dir := repo(t)
	os.WriteFile(filepath.Join(dir, "goal.md"), []byte("# Ship the parser\n\nParse every file.\n"), 0o644)
	code, out, errs := run(dir, "--goal", "goal.md", "--root-id", "parser", "--next", "execute")
	if code != exit.OK || strings.Count(out, "created ") != 9 || strings.Contains(out, "kept") {
		t.Fatalf("first: exit %d %q %q", code, out, errs)
	}
	root, ps := tree.Load([]byte(read(t, dir, layout.Tree)))
	if len(ps) > 0 || root.ID != "parser" || root.Title != "Ship the parser" || !strings.Contains(root.Goal, "Parse every file.") || root.Next != tree.NextExecute || len(root.Children) != 0 {
		t.Fatalf("the tree: %+v %v", root, ps)
	}
	if got := read(t, dir, layout.Gitignore); !strings.Contains(got, "iterations/\n") || !strings.Contains(got, "worktrees/\n") {
		t.Errorf(".gitignore %q", got)
	}
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(layout.Schema)), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(layout.Questions)), []byte("mine\n"), 0o644)
	code, out, _ = run(dir)
	if code != exit.OK || strings.Contains(out, "created") || !strings.Contains(out, "refreshed "+layout.Schema+"\n") {
		t.Fatalf("second: exit %d %q", code, out)
	}
	if strings.Count(out, "refreshed") != 1 || strings.Count(out, "kept ") != 8 {
		t.Fatalf("second: %q, want the schema copy refreshed and 8 kept", out)
	}
	if read(t, dir, layout.Questions) != "mine\n" {
		t.Error("a kept file was rewritten")
	}
}

// A different GOAL.md is never overwritten but with --new, which also
// drops its run id and starts the tree over; a bad --root-id and a
// directory outside git are refused.
func TestRefusals(t *testing.T) {
	dir := repo(t)
	os.WriteFile(filepath.Join(dir, "a.md"), []byte("# A\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.md"), []byte("# B\n"), 0o644)
	if code, _, errs := run(dir, "--goal", "a.md"); code != exit.OK {
		t.Fatalf("init: exit %d %q", code, errs)
	}
	if code, _, errs := run(dir, "--goal", "b.md"); code != exit.Negative || !strings.Contains(errs, "exists and differs from b.md: edit it, or start a new goal with runner-init --new --goal b.md") {
		t.Fatalf("another goal: exit %d %q", code, errs)
	}
	os.WriteFile(filepath.Join(dir, filepath.FromSlash(layout.Goal)), []byte("---\nid: old-run\n---\n# A\n"), 0o644)
	if code, out, errs := run(dir, "--new", "--goal", "b.md"); code != exit.OK || !strings.Contains(out, "refreshed "+layout.Goal) || !strings.Contains(out, "refreshed "+layout.Tree) {
		t.Fatalf("--new: exit %d %q %q", code, out, errs)
	}
	if got := read(t, dir, layout.Goal); strings.Contains(got, "old-run") || !strings.Contains(got, "# B") {
		t.Errorf("GOAL.md after --new: %q", got)
	}
	if root, _ := tree.Load([]byte(read(t, dir, layout.Tree))); root == nil || root.Title != "B" {
		t.Errorf("the tree after --new: %+v", root)
	}
	if code, _, errs := run(dir, "--root-id", "bad id"); code != exit.Usage || !strings.Contains(errs, `--root-id "bad id" does not match`) {
		t.Fatalf("bad root id: exit %d %q", code, errs)
	}
	if code, _, errs := run(t.TempDir()); code != exit.Negative || errs == "" {
		t.Fatalf("not a repository: exit %d %q", code, errs)
	}
}

// The goal's text is its body without front matter (compared with a
// plan's root).
func TestGoalText(t *testing.T) {
	if got := string(goalText([]byte("---\nid: r1\n---\n# G\n"))); got != "# G\n" {
		t.Errorf("goalText = %q", got)
	}
	if got := string(goalText([]byte("# G\n"))); got != "# G\n" {
		t.Errorf("goalText without front matter = %q", got)
	}
}

// --new says where the new run will start only on a run branch, naming
// main or master to start from instead, or REV when there is neither;
// the JSON report gives the base.
func TestNewOnARunBranch(t *testing.T) {
	dir := repo(t)
	goal := filepath.Join(dir, "..", filepath.Base(dir)+"-goal.md")
	os.WriteFile(goal, []byte("# Goal\n\nDo it.\n"), 0o644)
	gittest.Run(t, dir, "symbolic-ref", "HEAD", "refs/heads/trunk")
	gittest.Run(t, dir, "commit", "-q", "--allow-empty", "-m", "start")
	gittest.Run(t, dir, "checkout", "-q", "-b", "feature")
	if code, _, stderr := run(dir, "--new", "--goal", goal); code != 0 || strings.Contains(stderr, "run branch") {
		t.Fatalf("on a feature branch: exit %d, %q", code, stderr)
	}
	gittest.Run(t, dir, "checkout", "-q", "-b", "runner/r1")
	code, stdout, stderr := run(dir, "--new", "--json")
	want := "runner-init: warning: on run branch runner/r1: runner-start will start the new run from it, on top of run r1's commits; to start it from REV instead: runner-init --new --base REV\n"
	if code != 0 || stderr != want || !strings.Contains(stdout, `"rev": "runner/r1"`) || !strings.Contains(stdout, `"switched": false`) {
		t.Fatalf("exit %d, stdout %s, stderr %q", code, stdout, stderr)
	}
	gittest.Run(t, dir, "branch", "master")
	if _, _, stderr := run(dir, "--new"); !strings.Contains(stderr, "to start it from master instead: runner-init --new --base master\n") {
		t.Fatalf("with master: %q", stderr)
	}
}

// --base REV switches there, brings the config along where REV has none,
// and keeps REV's own, saying so, where it differs.
func TestNewFromABase(t *testing.T) {
	dir := repo(t)
	gittest.Run(t, dir, "symbolic-ref", "HEAD", "refs/heads/main")
	goal := filepath.Join(dir, "..", filepath.Base(dir)+"-goal.md")
	os.WriteFile(goal, []byte("# Goal\n\nDo it.\n"), 0o644)
	if code, _, stderr := run(dir, "--goal", goal); code != 0 {
		t.Fatalf("init: %d %q", code, stderr)
	}
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "main's runner files")
	gittest.Run(t, dir, "checkout", "-q", "-b", "runner/r1")
	os.WriteFile(filepath.Join(dir, layout.Config), []byte(strings.Replace(read(t, dir, layout.Config), "max_attempts_default = 3", "max_attempts_default = 5", 1)), 0o644)
	gittest.Run(t, dir, "commit", "-q", "-am", "the run's config")
	code, stdout, stderr := run(dir, "--new", "--base", "main")
	if code != 0 || !strings.HasPrefix(stdout, "switched to main ") || !strings.Contains(stdout, "kept .runner/state/config.toml\n") ||
		stderr != "runner-init: warning: .runner/state/config.toml of main is kept; the one of runner/r1 differs (git diff main runner/r1 -- .runner/state/config.toml shows how, but for changes not committed there)\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got := strings.TrimSpace(gittest.Run(t, dir, "branch", "--show-current")); got != "main" {
		t.Errorf("on %q", got)
	}
	if !strings.Contains(read(t, dir, layout.Config), "max_attempts_default = 3") {
		t.Error("main's config was not kept")
	}
}

// TestGuardFlag: --guard is the guard written, whatever the repository
// would have had detected (a justfile here), and said with its source.
func TestGuardFlag(t *testing.T) {
	dir := repo(t)
	os.WriteFile(filepath.Join(dir, "justfile"), []byte("ci:\n\ttrue\n"), 0o644)
	code, _, errs := run(dir, "--guard", "pytest -q tests")
	if code != exit.OK || !strings.Contains(errs, "runner-init: guard: pytest -q tests (--guard)\n") {
		t.Fatalf("exit %d %q", code, errs)
	}
	if got := read(t, dir, layout.Config); !strings.Contains(got, "\ncommand = [\"pytest\", \"-q\", \"tests\"]\n") {
		t.Errorf("config.toml's guard:\n%s", got)
	}
}
