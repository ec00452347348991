package ratchet

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		err  string
	}{
		{"42\n", 42, ""},
		{"ok  \tpkg\t0.1s\n\n  7  \n\n", 7, ""},
		{"0", 0, ""},
		{"", 0, "printed nothing"},
		{"  \n", 0, "printed nothing"},
		{"12 tests\n", 0, `"12 tests" is not a count`},
		{"-3\n", 0, "not a count"},
		{"99999999999\n", 0, "not a count"},
		// A line of 60 characters is quoted whole, a longer one cut there.
		{strings.Repeat("x", 60), 0, `"` + strings.Repeat("x", 60) + `" is not`},
		{strings.Repeat("y", 61), 0, `"` + strings.Repeat("y", 60) + `…" is not`},
	} {
		got, err := Parse([]byte(c.in))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Parse(%q) error = %v, want one containing %q", c.in, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Parse(%q) = %d, %v, want %d", c.in, got, err, c.want)
		}
	}
}

// TestBest reads the best count back from a real repository's history:
// only the run's own iteration and bootstrap commits count, the highest
// wins, and a later lower count does not lower it.
func TestBest(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		t.Setenv(k+"_NAME", "Test")
		t.Setenv(k+"_EMAIL", "test@example.com")
	}
	dir := t.TempDir()
	commit := func(msg string) {
		t.Helper()
		cmd := exec.Command("git", "-C", dir, "commit", "-q", "--allow-empty", "-m", msg)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git commit: %v: %s", err, out)
		}
	}
	if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	commit("initial\n\n" + TrailerLine(500)) // not the run's: ignored
	if _, _, found, err := Best(repo, "HEAD", "run-a"); err != nil || found {
		t.Fatalf("Best before any count = found %v, %v; want none", found, err)
	}
	commit("chore(loop): start run run-a\n\n" + TrailerLine(3))
	commit("chore(loop): run run-a iter 1 node root status=done guard=pass\n\n" + TrailerLine(5))
	commit("chore(loop): run run-b iter 1 node root status=done guard=pass\n\n" + TrailerLine(900)) // another run
	commit("chore(loop): run run-a iter 2 node x status=done guard=pass\n\n" + TrailerLine(4))
	commit("chore(loop): operator retry node x\n\n" + TrailerLine(800)) // not an iteration
	commit("chore(loop): run run-a iter 3 node y status=done guard=fail")
	best, sha, found, err := Best(repo, "HEAD", "run-a")
	if err != nil || !found || best != 5 {
		t.Fatalf("Best = %d, %v, %v; want 5", best, found, err)
	}
	want, _ := repo.Run("rev-parse", "HEAD~4")
	if sha != strings.TrimSpace(string(want)) {
		t.Errorf("best commit = %s, want %s", sha, want)
	}
	// From an earlier commit, only what was recorded up to it counts.
	if best, _, _, _ := Best(repo, "HEAD~5", "run-a"); best != 3 {
		t.Errorf("Best at the bootstrap = %d, want 3", best)
	}
	// A count of 0 is a count: the best of a run whose only count is 0.
	commit("chore(loop): start run run-z\n\n" + TrailerLine(0))
	if best, _, found, err := Best(repo, "HEAD", "run-z"); err != nil || !found || best != 0 {
		t.Errorf("Best of a lone 0 = %d, found %v, %v; want 0, found", best, found, err)
	}
	// Of equal counts, the newest commit holds the best.
	commit("chore(loop): run run-a iter 4 node z status=done guard=pass\n\n" + TrailerLine(5))
	best, sha, _, _ = Best(repo, "HEAD", "run-a")
	if head, _ := repo.Run("rev-parse", "HEAD"); best != 5 || sha != strings.TrimSpace(string(head)) {
		t.Errorf("Best of equals = %d at %s, want 5 at HEAD %s", best, sha, head)
	}
}
