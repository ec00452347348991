package git

import (
	"slices"
	"testing"
)

// Entries marked assume-unchanged or skip-worktree are listed by kind, and
// Unhide clears both marks.
func TestHiddenPaths(t *testing.T) {
	r := newRepo(t)
	for _, f := range []string{"a", "b", "c"} {
		write(t, r, f, f+"\n")
	}
	if _, err := r.Run("add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("files"); err != nil {
		t.Fatal(err)
	}
	r.Run("update-index", "--assume-unchanged", "a")
	r.Run("update-index", "--skip-worktree", "b")
	assumed, skipped, err := r.HiddenPaths()
	if err != nil || !slices.Equal(assumed, []string{"a"}) || !slices.Equal(skipped, []string{"b"}) {
		t.Fatalf("HiddenPaths = %q, %q, %v; want [a], [b]", assumed, skipped, err)
	}
	if assumed, skipped, _ := r.HiddenPaths("c"); len(assumed)+len(skipped) != 0 {
		t.Fatalf("scope c: %q %q", assumed, skipped)
	}
	if err := r.Unhide(assumed, skipped); err != nil {
		t.Fatal(err)
	}
	if assumed, skipped, _ := r.HiddenPaths(); len(assumed)+len(skipped) != 0 {
		t.Fatalf("after Unhide: %q %q", assumed, skipped)
	}
}
