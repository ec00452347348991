package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
)

// A merge a session leaves for the runner's commit to finish (MERGE_HEAD,
// in the work tree's own git directory: a linked worktree's is not the
// common one) is reported and removed; the user's MERGE_HEAD from before
// the session stays.
func TestGitSettingsSequencerState(t *testing.T) {
	for _, c := range repoAndWorktree(t) {
		t.Run(c.name, func(t *testing.T) {
			repo, err := git.Open(c.dir)
			if err != nil {
				t.Fatal(err)
			}
			mergeHead := gitIn(t, c.dir, "rev-parse", "--path-format=absolute", "--git-path", "MERGE_HEAD")
			head := gitIn(t, c.dir, "rev-parse", "HEAD")
			g, err := sealGit(repo)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, mergeHead, head+"\n")
			reasons, err := g.Restore("the agent")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, "MERGE_HEAD added") }) {
				t.Errorf("reasons %q name no MERGE_HEAD added", reasons)
			}
			if _, err := os.Stat(mergeHead); !os.IsNotExist(err) {
				t.Errorf("MERGE_HEAD the session left is still there: %v", err)
			}
			// The user's own, from before the session, stays.
			writeFile(t, mergeHead, head+"\n")
			g, err = sealGit(repo)
			if err != nil {
				t.Fatal(err)
			}
			if reasons, err := g.Restore("the agent"); err != nil || len(reasons) != 0 {
				t.Errorf("a MERGE_HEAD from before the session: reasons %q, %v", reasons, err)
			}
			if _, err := os.Stat(mergeHead); err != nil {
				t.Errorf("the user's MERGE_HEAD was removed: %v", err)
			}
			os.Remove(mergeHead)
		})
	}
}

// repoAndWorktree is a repository with one commit and a linked worktree
// of it, each with its name.
func repoAndWorktree(t *testing.T) []struct{ name, dir string } {
	t.Helper()
	main := t.TempDir()
	gitIn(t, main, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(main, "a.txt"), "a\n")
	gitIn(t, main, "add", "-A")
	gitIn(t, main, "commit", "-qm", "base")
	linked := filepath.Join(t.TempDir(), "wt")
	gitIn(t, main, "worktree", "add", "-q", "-b", "runner/r", linked)
	return []struct{ name, dir string }{{"repository", main}, {"linked worktree", linked}}
}
