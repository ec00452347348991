// Package runtest makes, for tests, a repository in which run r1 has
// started: the real git, with gittest's fixed identity.
package runtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
)

// Repo makes dir a git repository on the branch of run r1 whose one
// commit holds .runner/ as runner-start leaves it: the goal, a tree of
// one open execute leaf "a" under the root, the run state, a config
// without a sandbox and .runner/.gitignore. It sets git's identity for
// the test's own process too (gittest.Setenv).
func Repo(t *testing.T, dir string) {
	t.Helper()
	gittest.Setenv(t, dir)
	gittest.Run(t, dir, "init", "-q", "-b", "runner/r1")
	a := &tree.Node{ID: "a", Order: 1, Title: "A", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 3, Children: []*tree.Node{}}
	root := &tree.Node{ID: "root", Title: "R", Goal: "g", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3, Children: []*tree.Node{a}}
	for rel, data := range map[string][]byte{
		layout.Goal:      []byte("---\nid: r1\n---\n# Goal\n"),
		layout.Tree:      tree.Encode(root),
		layout.RunState:  runstate.Encode(runstate.New("r1")),
		layout.Config:    []byte("[sandbox]\nmode = \"none\"\n"),
		layout.Gitignore: []byte("context/\niterations/\nruns/\nlock\ncancel\nanswers/\nworktrees/\n"),
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "chore(loop): start run r1")
}
