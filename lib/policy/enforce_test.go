package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/git"
)

// enforceRepo is a repository on runner/r with a protected script, an
// append-only test directory, the goal and the ratchet's tests-passed
// list, committed; it returns the directory, the repository and the base
// commit.
func enforceRepo(t *testing.T) (string, *git.Repo, string) {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "runner/r")
	for p, data := range map[string]string{"ci/check.sh": "exit 0\n", "tests/a_test.go": "package a\n", "main.go": "package main\n", ".runner/GOAL.md": "# Goal\n", ".runner/state/tests_passed.txt": "ex.TestA\nex.TestB\n"} {
		writeFile(t, filepath.Join(dir, p), data)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, repo, gitIn(t, dir, "rev-parse", "HEAD")
}

var enforceProtected = []string{"ci/*.sh", "append-only:tests"}

// TestEnforceHead: a session that switched the branch or moved HEAD is
// put back on the run branch at the base commit, its files kept in the
// work tree; the reason names what it did.
func TestEnforceHead(t *testing.T) {
	for _, c := range []struct {
		name    string
		session func(t *testing.T, dir string)
		reason  func(base, head string) string
	}{
		{"commit", func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "main.go"), "package main // changed\n")
			gitIn(t, dir, "commit", "-qam", "sneaky")
		}, func(base, head string) string {
			return "the agent moved HEAD (" + base[:12] + " → " + head[:12] + ": committed or reset itself); the runner restored it, keeping the files"
		}},
		{"switch", func(t *testing.T, dir string) {
			gitIn(t, dir, "checkout", "-q", "-b", "other")
			writeFile(t, filepath.Join(dir, "main.go"), "package main // changed\n")
			gitIn(t, dir, "commit", "-qam", "elsewhere")
		}, func(base, head string) string {
			return `the agent switched the branch from runner/r to "other"; the runner switched back`
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, repo, base := enforceRepo(t)
			c.session(t, dir)
			head := gitIn(t, dir, "rev-parse", "HEAD")
			reasons, err := Enforce(repo, "the agent", "runner/r", base, enforceProtected, time.Time{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.reason(base, head); !slices.Equal(reasons, []string{want}) {
				t.Fatalf("reasons %q, want [%q]", reasons, want)
			}
			if b := gitIn(t, dir, "symbolic-ref", "--short", "HEAD"); b != "runner/r" {
				t.Errorf("on %s", b)
			}
			if h := gitIn(t, dir, "rev-parse", "HEAD"); h != base {
				t.Errorf("HEAD %s, want the base %s", h, base)
			}
			if st := gitIn(t, dir, "status", "--porcelain"); st != "M main.go" {
				t.Errorf("the session's change is not kept, unstaged: %q", st)
			}
		})
	}
}

// TestEnforcePaths: protected and runner-owned paths changed or created
// are restored or removed (from the index too, when staged); an
// append-only directory takes new files but not changes to old ones. The
// ratchet's tests-passed list is runner-owned: a session that drops a test
// from it is reported and the list put back.
func TestEnforcePaths(t *testing.T) {
	dir, repo, base := enforceRepo(t)
	writeFile(t, filepath.Join(dir, "ci/check.sh"), "exit 1\n")
	writeFile(t, filepath.Join(dir, "ci/new.sh"), "exit 1\n")
	writeFile(t, filepath.Join(dir, "ci/staged.sh"), "exit 1\n")
	gitIn(t, dir, "add", "ci/staged.sh")
	writeFile(t, filepath.Join(dir, "tests/a_test.go"), "package a // weakened\n")
	writeFile(t, filepath.Join(dir, "tests/b_test.go"), "package a\n")
	writeFile(t, filepath.Join(dir, ".runner/GOAL.md"), "# Another goal\n")
	writeFile(t, filepath.Join(dir, ".runner/state/tests_passed.txt"), "ex.TestA\n")
	writeFile(t, filepath.Join(dir, "main.go"), "package main // the work\n")
	reasons, err := Enforce(repo, "the guard", "runner/r", base, enforceProtected, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(reasons)
	want := []string{
		"the guard changed or deleted tests/a_test.go, which existed before and is append-only (protected_paths append-only:tests); the runner restored it",
		"the guard changed the protected path .runner/GOAL.md (runner-owned); the runner restored it",
		"the guard changed the protected path .runner/state/tests_passed.txt (runner-owned); the runner restored it",
		"the guard changed the protected path ci/check.sh (protected_paths ci/*.sh); the runner restored it",
		"the guard changed the protected path ci/new.sh (protected_paths ci/*.sh); the runner restored it",
		"the guard changed the protected path ci/staged.sh (protected_paths ci/*.sh); the runner restored it",
	}
	if !slices.Equal(reasons, want) {
		t.Fatalf("reasons:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
	st := gitIn(t, dir, "status", "--porcelain", "--untracked-files=all")
	if st != "M main.go\n?? tests/b_test.go" {
		t.Errorf("status after the check: %q", st)
	}
	for p, data := range map[string]string{"ci/check.sh": "exit 0\n", "tests/a_test.go": "package a\n", ".runner/GOAL.md": "# Goal\n", ".runner/state/tests_passed.txt": "ex.TestA\nex.TestB\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, p)); err != nil || string(got) != data {
			t.Errorf("%s: %q %v", p, got, err)
		}
	}
}

// TestEnforceHiddenBoth: one protected file marked assume-unchanged and
// another skip-worktree, both changed: both marks cleared, both changes
// seen and restored.
func TestEnforceHiddenBoth(t *testing.T) {
	dir, repo, base := enforceRepo(t)
	writeFile(t, filepath.Join(dir, "ci/two.sh"), "exit 0\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "two")
	base = gitIn(t, dir, "rev-parse", "HEAD")
	gitIn(t, dir, "update-index", "--assume-unchanged", "--", "ci/check.sh")
	gitIn(t, dir, "update-index", "--skip-worktree", "--", "ci/two.sh")
	writeFile(t, filepath.Join(dir, "ci/check.sh"), "exit 1\n")
	writeFile(t, filepath.Join(dir, "ci/two.sh"), "exit 1\n")
	reasons, err := Enforce(repo, "the agent", "runner/r", base, enforceProtected, time.Time{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 2 || gitIn(t, dir, "status", "--porcelain") != "" {
		t.Fatalf("reasons %q", reasons)
	}
	if assumed, skipped, err := repo.HiddenPaths(); err != nil || len(assumed)+len(skipped) != 0 {
		t.Fatalf("marks left: %q %q %v", assumed, skipped, err)
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "(none)",
		"abc":                   "abc",
		"0123456789ab":          "0123456789ab",
		"0123456789abc":         "0123456789ab",
		strings.Repeat("f", 40): strings.Repeat("f", 12),
	} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}
