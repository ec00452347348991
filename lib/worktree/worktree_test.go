package worktree

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
