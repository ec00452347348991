package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
)

// TestLocked: a lock file held with flock (as runner-step and runner-loop
// hold .runner/lock) reads as locked; released, absent or never taken, not.
func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	if Locked(path) {
		t.Fatal("a missing lock file reads as locked")
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Locked(path) {
		t.Fatal("an unheld lock file reads as locked")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if !Locked(path) {
		t.Fatal("a held lock reads as free")
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if Locked(path) {
		t.Fatal("a released lock reads as locked")
	}
}

// TestRemoveRefusesRunning: a clean run worktree whose own .runner/lock a
// runner holds (flock, as runner-step and runner-loop hold it) is
// inspected as running and its removal is refused, the worktree left in
// place; once the lock is released it is removed and its branch kept.
func TestRemoveRefusesRunning(t *testing.T) {
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	checkout := filepath.Join(dir, "repo")
	os.MkdirAll(filepath.Join(checkout, ".runner"), 0o755)
	gittest.Run(t, checkout, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(checkout, ".runner", ".gitignore"), []byte("lock\n"), 0o644)
	gittest.Run(t, checkout, "add", "-A")
	gittest.Run(t, checkout, "commit", "-qm", "start")
	head := gittest.Run(t, checkout, "rev-parse", "HEAD")
	wt := filepath.Join(dir, "wt-r1")
	gittest.Run(t, checkout, "worktree", "add", "-q", "-b", "runner/r1", wt)
	repo, err := git.Open(checkout)
	if err != nil {
		t.Fatal(err)
	}

	lock, err := os.Create(filepath.Join(wt, filepath.FromSlash(layout.Lock)))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	w, err := Find(repo, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if err := Inspect(&w); err != nil || !w.Running || w.Dirty {
		t.Fatalf("Inspect with the worktree's lock held: running=%v dirty=%v, %v; want running, clean", w.Running, w.Dirty, err)
	}
	if err := Remove(repo, w); err == nil || !strings.Contains(err.Error(), "a runner is working in "+wt) {
		t.Fatalf("Remove while a runner holds the lock = %v, want refused", err)
	}
	if _, err := os.Stat(filepath.Join(wt, ".runner", ".gitignore")); err != nil {
		t.Fatalf("the refused remove took the worktree: %v", err)
	}

	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := Remove(repo, w); err != nil {
		t.Fatalf("Remove once the lock is released: %v", err)
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	if got := gittest.Run(t, checkout, "rev-parse", "runner/r1"); got != head {
		t.Fatalf("branch runner/r1 at %q, want %s", got, head)
	}
}
