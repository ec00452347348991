package evidence

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestRemoveUnlisted: an empty directory, a tree of empty directories, a
// FIFO and a socket-like special file made since go; an old empty
// directory and an old FIFO stay, but an old FIFO named .gitignore goes;
// a .git directory (a nested repository's empty refs/ included), .runner
// at the top (but not a .runner deeper down) and a dependency directory
// are not walked; a directory with a file stays.
func TestRemoveUnlisted(t *testing.T) {
	root := t.TempDir()
	madeFixture(t, root, "old-empty/", "keep/file.txt", "sub/.git/refs/heads/", ".runner/context/", "node_modules/pkg/empty/")
	fifo := func(rel string) {
		t.Helper()
		if err := syscall.Mkfifo(filepath.Join(root, filepath.FromSlash(rel)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fifo("old.pipe")
	fifo("keep/.gitignore")
	since := afterBirthOf(t, filepath.Join(root, "keep/.gitignore"))
	madeFixture(t, root, "new-empty/", "deep/a/b/", "keep/also-empty/", "with-file/x.txt", "sub/.git/objects/pack/", "node_modules/new-empty/", ".runner/new-empty/", "nested/.runner/x/")
	fifo("keep/new.pipe")
	got := RemoveUnlisted(root, since)
	want := []string{"deep/", "deep/a/", "deep/a/b/", "keep/.gitignore", "keep/also-empty/", "keep/new.pipe", "nested/", "nested/.runner/", "nested/.runner/x/", "new-empty/"}
	if !slices.Equal(got, want) {
		t.Errorf("removed %q, want %q", got, want)
	}
	for _, p := range []string{"old-empty", "old.pipe", "keep/file.txt", "sub/.git/refs/heads", "sub/.git/objects/pack", ".runner/context", ".runner/new-empty", "node_modules/pkg/empty", "node_modules/new-empty", "with-file/x.txt"} {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("%s went: %v", p, err)
		}
	}
	if again := RemoveUnlisted(root, since); again != nil {
		t.Errorf("again: %q", again)
	}
}
