package runnerexport

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/export"
	"github.com/treeloop/treeloop/lib/git"
)

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// An untracked file is uncommitted work: refused with exit 1, naming it;
// an ignored one is not.
func TestCleanRefusesUncommittedWork(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored\n"), 0o644)
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "x")
	os.WriteFile(filepath.Join(dir, "ignored"), nil, 0o644)
	if err := clean(dir); err != nil {
		t.Fatalf("an ignored file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "new.go"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "other.go"), nil, 0o644)
	err := clean(dir)
	if exit.Code(err) != exit.Negative || !strings.Contains(err.Error(), "(new.go and 1 more)") {
		t.Fatalf("clean = %v (exit %d)", err, exit.Code(err))
	}
	if err := clean(filepath.Join(dir, "gone")); err != nil {
		t.Fatalf("a worktree whose directory is gone: %v", err)
	}
}

// One line per commit and per skipped node, then the summary line.
func TestPrintText(t *testing.T) {
	var b bytes.Buffer
	sha := strings.Repeat("ab", 20)
	printText(&b, Output{
		Result:  export.Result{Branch: "treeloop/r", Head: sha, Commits: []export.Exported{{Commit: sha, Nodes: []string{"a"}, Title: `Say "hi"`, Loop: []string{sha}}}},
		Skipped: []string{"b"},
	})
	want := "commit=" + sha + " nodes=a passed=" + sha[:12] + ` title="Say \"hi\""` + "\nskipped=b reason=no-code-change\nbranch=treeloop/r head=" + sha + " onto=none commits=1\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// The body goes under the common git directory by default; a file in
// the work tree is refused unless git ignores it; one in the git
// directory, outside the work tree or "-" (stdout) is taken as given.
func TestBodyFile(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.ignored.md\n"), 0o644)
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "x")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := &cli.Env{Dir: dir}
	root, _ := filepath.EvalSymlinks(dir)
	for _, c := range []struct{ flag, want, err string }{
		{"", filepath.Join(root, ".git", "treeloop", "export", "r1.md"), ""},
		{"-", "-", ""},
		{"pr.ignored.md", filepath.Join(dir, "pr.ignored.md"), ""},
		{".git/pr.md", filepath.Join(dir, ".git", "pr.md"), ""},
		{filepath.Join(t.TempDir(), "pr.md"), "", ""},
		{"pr.md", "", "--pr-body pr.md lies in the work tree " + dir + ", where git would commit it with the next iteration: write it outside (the default is " + filepath.Join(root, ".git", "treeloop", "export", "r1.md") + "), or to a path git ignores"},
		{"sub/dir/pr.md", "", "lies in the work tree"},
	} {
		o := Options{PRBody: c.flag}
		got, err := o.bodyFile(env, repo, "r1", dir)
		switch {
		case c.err != "":
			if exit.Code(err) != exit.Negative || !strings.Contains(err.Error(), c.err) {
				t.Errorf("--pr-body %q: %v (exit %d), want %q", c.flag, err, exit.Code(err), c.err)
			}
		case err != nil:
			t.Errorf("--pr-body %q: %v", c.flag, err)
		case c.want != "" && got != c.want:
			t.Errorf("--pr-body %q: %s, want %s", c.flag, got, c.want)
		case c.want == "" && got != c.flag:
			t.Errorf("--pr-body %q: %s", c.flag, got)
		}
	}
	if st, err := os.Stat(filepath.Join(root, ".git", "treeloop", "export")); err != nil || !st.IsDir() {
		t.Errorf("the default's directory was not made: %v", err)
	}
	if err := (&Options{PRBody: "-", JSON: true}).Validate(); err == nil {
		t.Error("--pr-body - with --json: no error")
	}
}

// For a run in its own worktree, a body file inside that worktree is
// refused as one in this checkout's work tree is: the run's next
// iteration would commit it.
func TestBodyFileInRunWorktree(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "commit", "-q", "--allow-empty", "-m", "x")
	wt := filepath.Join(t.TempDir(), "run-wt")
	gitIn(t, dir, "worktree", "add", "-q", "-b", "runner/r1", wt)
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{PRBody: filepath.Join(wt, "pr.md")}
	_, err = o.bodyFile(&cli.Env{Dir: dir}, repo, "r1", wt)
	if exit.Code(err) != exit.Negative || !strings.Contains(err.Error(), "lies in the work tree") || !strings.Contains(err.Error(), "run-wt") {
		t.Fatalf("--pr-body in the run's worktree: %v (exit %d), want refused", err, exit.Code(err))
	}
}
