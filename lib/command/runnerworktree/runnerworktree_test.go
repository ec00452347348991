package runnerworktree

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
)

func run(dir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// A run's worktree is listed with its run, branch, head and state; one
// with uncommitted changes is not removed; a clean one is, and its branch
// stays. A repository with none lists nothing (and [] in JSON).
func TestListAndRemove(t *testing.T) {
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	repo := filepath.Join(dir, "repo")
	os.MkdirAll(repo, 0o755)
	gittest.Run(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "README"), []byte("x\n"), 0o644)
	gittest.Run(t, repo, "add", "-A")
	gittest.Run(t, repo, "commit", "-qm", "start")
	head := gittest.Run(t, repo, "rev-parse", "HEAD")

	if code, out, errs := run(repo); code != exit.OK || out != "" {
		t.Fatalf("no worktree: exit %d %q %q", code, out, errs)
	}
	if code, out, _ := run(repo, "list", "--json"); code != exit.OK || !strings.Contains(out, `"worktrees": []`) {
		t.Fatalf("no worktree, --json: exit %d %q", code, out)
	}

	wt := filepath.Join(dir, "wt-r1")
	gittest.Run(t, repo, "worktree", "add", "-q", "-b", "runner/r1", wt)
	os.WriteFile(filepath.Join(wt, "work.txt"), []byte("unsaved\n"), 0o644)
	code, out, errs := run(repo)
	want := "run=r1 branch=runner/r1 path=" + wt + " head=" + head[:12] + " dirty=true running=false\n"
	if code != exit.OK || out != want {
		t.Fatalf("list: exit %d %q %q, want %q", code, out, errs, want)
	}
	if code, _, errs := run(repo, "remove", "r1"); code != exit.Negative || !strings.Contains(errs, "remove the worktree of run r1") {
		t.Fatalf("remove with changes: exit %d %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(wt, "work.txt")); err != nil {
		t.Fatalf("the refused remove lost the change: %v", err)
	}
	os.Remove(filepath.Join(wt, "work.txt"))
	if code, out, errs := run(repo, "remove", wt); code != exit.OK || out != "removed run=r1 path="+wt+" branch=runner/r1 (kept)\n" {
		t.Fatalf("remove by directory: exit %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	if got := gittest.Run(t, repo, "rev-parse", "runner/r1"); got != head {
		t.Fatalf("branch runner/r1 at %q, want %s", got, head)
	}
	if code, _, errs := run(repo, "remove", "r1"); code != exit.Negative || errs == "" {
		t.Fatalf("remove again: exit %d %q", code, errs)
	}
}
