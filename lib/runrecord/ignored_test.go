package runrecord

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
)

// TestRunnerIgnoresRuns: the reading of .runner/.gitignore without git
// never says "ignored" where git check-ignore does not, and says it for
// runner-init's file.
func TestRunnerIgnoresRuns(t *testing.T) {
	for _, c := range []struct {
		name, gitignore, root string
		link, runsLink, want  bool
	}{
		{name: "runner-init's", gitignore: "# logs\ncontext/\niterations/\nruns/\nlock\n", want: true},
		{name: "anchored", gitignore: "/runs/\n", want: true},
		{name: "negated after", gitignore: "runs/\n!runs/\n"},
		{name: "negated file after", gitignore: "runs/\n!runs/x.json\n"},
		{name: "negated before", gitignore: "!runs/\nruns/\n", want: true},
		{name: "no slash", gitignore: "runs\n"},
		{name: "trailing space", gitignore: "runs/ \n"},
		{name: "none", gitignore: "iterations/\n"},
		{name: "only the root's", gitignore: "iterations/\n", root: ".runner/runs/\n"},
		{name: "a symbolic link", gitignore: "runs/\n", link: true},
		{name: "runs a symbolic link", gitignore: "runs/\n", runsLink: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			gittest.Run(t, root, "init", "-q")
			put(t, root, layout.Gitignore, []byte(c.gitignore))
			if c.root != "" {
				put(t, root, ".gitignore", []byte(c.root))
			}
			if c.link {
				p := filepath.Join(root, layout.Gitignore)
				if err := os.Rename(p, filepath.Join(root, "ignore-rules")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../ignore-rules", p); err != nil {
					t.Fatal(err)
				}
			}
			if c.runsLink {
				if err := os.Symlink(t.TempDir(), filepath.Join(root, layout.Runs)); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command("git", "check-ignore", "-q", "--no-index", layout.RunRecord("x"))
			cmd.Dir = root
			byGit := cmd.Run() == nil
			got := runnerIgnoresRuns(root)
			if got != c.want || got && !byGit {
				t.Errorf("runnerIgnoresRuns = %v (want %v), git check-ignore says %v", got, c.want, byGit)
			}
			if runsIgnored(root) != byGit {
				t.Errorf("runsIgnored = %v, git says %v", !byGit, byGit)
			}
		})
	}
}
