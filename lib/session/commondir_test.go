package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
)

// A commondir file a session writes into a git directory (which would
// move git's config, hooks and refs elsewhere, a plain .git included) is
// reported and removed, in a repository and in a linked worktree's own
// git directory.
func TestGitSettingsCommondir(t *testing.T) {
	elsewhere := t.TempDir()
	for _, c := range repoAndWorktree(t) {
		t.Run(c.name, func(t *testing.T) {
			repo, err := git.Open(c.dir)
			if err != nil {
				t.Fatal(err)
			}
			commondir := filepath.Join(gitIn(t, c.dir, "rev-parse", "--absolute-git-dir"), "commondir")
			was, wasErr := os.ReadFile(commondir)
			g, err := sealGit(repo)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, commondir, elsewhere+"\n")
			reasons, err := g.Restore("the agent")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, "commondir") }) {
				t.Errorf("reasons %q name no commondir", reasons)
			}
			now, nowErr := os.ReadFile(commondir)
			if string(now) != string(was) || (wasErr == nil) != (nowErr == nil) {
				t.Errorf("commondir after the restore: %q, %v; before the session: %q, %v", now, nowErr, was, wasErr)
			}
		})
	}
}
