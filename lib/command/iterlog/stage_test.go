package iterlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// TestStagedDiffUnembeds: the tree stagedDiff writes, the one loop-commit
// commits, holds the files of a repository made inside the work tree (and
// of one inside it), not a gitlink, and the file a link out of the work
// tree points to, not the link; each .git is kept under the git
// directory, a warning names each, and the diff is that tree's.
func TestStagedDiffUnembeds(t *testing.T) {
	dir := t.TempDir()
	gittest.Setenv(t, t.TempDir())
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The defaults: no sandbox, so a link out is copied in.
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(layout.Config)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, layout.Config), config.DefaultTOML(), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "base")
	head := strings.TrimSpace(gittest.Run(t, dir, "rev-parse", "HEAD"))
	for _, sub := range []string{"sub", "sub/inner"} {
		p := filepath.Join(dir, sub)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "f.txt"), []byte(sub+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, p, "init", "-q")
		gittest.Run(t, p, "add", "f.txt")
		gittest.Run(t, p, "commit", "-qm", "hidden")
	}
	outside := filepath.Join(t.TempDir(), "o.txt")
	if err := os.WriteFile(outside, []byte("o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.AddAll(); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	env := &cli.Env{Name: "iter-log", Stdout: &bytes.Buffer{}, Stderr: &warn, Dir: dir}
	m := &iterdir.Meta{RunID: "run-u", Iteration: 7}
	patch, staged, err := stagedDiff(env, repo, head, m)
	if err != nil {
		t.Fatal(err)
	}
	if staged.Tree == "" {
		t.Fatal("no staged tree")
	}
	ls := gittest.Run(t, dir, "ls-tree", "-r", staged.Tree)
	for _, want := range []string{"\tsub/f.txt", "\tsub/inner/f.txt"} {
		if line := lineOf(ls, want); !strings.HasPrefix(line, "100644 blob ") {
			t.Errorf("the staged tree has %q for %s:\n%s", line, want, ls)
		}
	}
	if line := lineOf(ls, "\tlink.txt"); !strings.HasPrefix(line, "100644 blob ") {
		t.Errorf("the link out is staged as %q, not its file", line)
	}
	if got := gittest.Run(t, dir, "cat-file", "-p", staged.Tree+":link.txt"); got != "o" {
		t.Errorf("link.txt staged as %q", got)
	}
	if !strings.Contains(warn.String(), "iter-log: warning: link.txt is a symbolic link out of the work tree, to "+outside) {
		t.Errorf("no warning for the link: %q", warn.String())
	}
	if strings.Contains(ls, "160000") {
		t.Errorf("a gitlink in the staged tree:\n%s", ls)
	}
	if !bytes.Contains(patch, []byte("+++ b/sub/inner/f.txt")) || bytes.Contains(patch, []byte("Subproject commit")) {
		t.Errorf("the diff is not the staged tree's:\n%s", patch)
	}
	for _, sub := range []string{"sub", "sub/inner"} {
		kept := filepath.Join(dir, ".git", "treeloop", "embedded", "run-u", "0007", sub, ".git")
		if _, err := os.Stat(filepath.Join(kept, "HEAD")); err != nil {
			t.Errorf("%s's .git is not kept: %v", sub, err)
		}
		if !strings.Contains(warn.String(), "iter-log: warning: "+sub+"/ is a git repository made inside the work tree") || !strings.Contains(warn.String(), kept) {
			t.Errorf("no warning for %s: %q", sub, warn.String())
		}
	}
}

// lineOf is the line of text that ends with suffix, "" when none does.
func lineOf(text, suffix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, suffix) {
			return l
		}
	}
	return ""
}
