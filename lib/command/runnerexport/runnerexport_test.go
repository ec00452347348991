package runnerexport

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/export"
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
