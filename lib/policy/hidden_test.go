package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/git"
)

// A protected file a session marks assume-unchanged or skip-worktree and
// then changes or deletes is reported and restored: the status Enforce
// reads beside the marks check cannot see the change, so the check must
// clear the mark and read the status again. A marked file nothing protects
// keeps its mark and is not reported, and so is a protected file whose
// mark is a sparse checkout's (skip-worktree, absent, core.sparseCheckout
// on).
func TestEnforceHiddenProtected(t *testing.T) {
	for _, c := range []struct {
		name   string
		mark   string // the update-index flag the session sets on the file
		file   string
		change func(t *testing.T, full string)
		sparse bool
		want   string // the reason; "" for none
	}{
		{"assume-unchanged", "--assume-unchanged", "ci/check.sh", rewrite, false, "the agent changed the protected path ci/check.sh (protected_paths ci/*.sh); the runner restored it"},
		{"skip-worktree", "--skip-worktree", "ci/check.sh", rewrite, false, "the agent changed the protected path ci/check.sh (protected_paths ci/*.sh); the runner restored it"},
		{"skip-worktree-delete", "--skip-worktree", "ci/check.sh", remove, false, "the agent changed the protected path ci/check.sh (protected_paths ci/*.sh); the runner restored it"},
		{"runner-owned", "--skip-worktree", ".runner/GOAL.md", rewrite, false, "the agent changed the protected path .runner/GOAL.md (runner-owned); the runner restored it"},
		{"not-protected", "--skip-worktree", "main.go", rewrite, false, ""},
		{"sparse-checkout", "--skip-worktree", "ci/check.sh", remove, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			gitIn(t, dir, "init", "-q", "-b", "runner/r")
			files := map[string]string{"ci/check.sh": "exit 0\n", "main.go": "package main\n", ".runner/GOAL.md": "# Goal\n"}
			for p, data := range files {
				writeFile(t, filepath.Join(dir, p), data)
			}
			gitIn(t, dir, "add", "-A")
			gitIn(t, dir, "commit", "-qm", "base")
			base := gitIn(t, dir, "rev-parse", "HEAD")
			if c.sparse {
				gitIn(t, dir, "config", "core.sparseCheckout", "true")
			}
			gitIn(t, dir, "update-index", c.mark, "--", c.file)
			full := filepath.Join(dir, filepath.FromSlash(c.file))
			c.change(t, full)
			if out := gitIn(t, dir, "status", "--porcelain"); out != "" {
				t.Fatalf("the mark does not hide the change from git status: %q", out)
			}
			repo, err := git.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			reasons, err := Enforce(repo, "the agent", "runner/r", base, []string{"ci/*.sh"}, time.Time{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			assumed, skipped, err := repo.HiddenPaths()
			if err != nil {
				t.Fatal(err)
			}
			marked := slices.Contains(assumed, c.file) || slices.Contains(skipped, c.file)
			if c.want == "" {
				if len(reasons) != 0 {
					t.Fatalf("reasons %q, want none", reasons)
				}
				if !marked {
					t.Errorf("the mark on %s was cleared; it is not the check's to clear", c.file)
				}
				return
			}
			if !slices.Equal(reasons, []string{c.want}) {
				t.Fatalf("reasons %q, want [%q]", reasons, c.want)
			}
			if marked {
				t.Errorf("%s is still marked (assumed %q, skipped %q)", c.file, assumed, skipped)
			}
			if out := gitIn(t, dir, "status", "--porcelain"); out != "" {
				t.Errorf("not restored: git status %q", out)
			}
			data, err := os.ReadFile(full)
			if err != nil || string(data) != files[c.file] {
				t.Errorf("%s holds %q (%v) after the check, not the base's content", c.file, data, err)
			}
		})
	}
}

func writeFile(t testing.TB, full, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func rewrite(t *testing.T, full string) { writeFile(t, full, "changed by the session\n") }

func remove(t *testing.T, full string) {
	if err := os.Remove(full); err != nil {
		t.Fatal(err)
	}
}
