package runlock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestTakeFD: a free lock is taken (not inherited); a description that
// holds it already shares it (inherited); a lock another description
// holds is refused, and a descriptor on another file is an error.
func TestTakeFD(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	if err := CanOpen(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if inherited, err := TakeFD(fd, path); err != nil || inherited {
		t.Fatalf("a free lock: inherited %v, %v", inherited, err)
	}
	if inherited, err := TakeFD(fd, path); err != nil || !inherited {
		t.Fatalf("the lock this description holds: inherited %v, %v", inherited, err)
	}
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := TakeFD(int(other.Fd()), path); !errors.Is(err, ErrHeld) {
		t.Fatalf("a lock another description holds: %v", err)
	}
	if _, err := take(-1, path); !errors.Is(err, ErrHeld) {
		t.Fatalf("Take of a held lock: %v", err)
	}
	// A descriptor that holds it shares its hold.
	if release, err := take(fd, path); err != nil {
		t.Fatalf("Take sharing the hold: %v", err)
	} else {
		release()
	}
	if _, err := TakeFD(fd, filepath.Join(t.TempDir(), "other")); err == nil {
		t.Fatal("a descriptor on another file was taken as the lock")
	}
	if err := WriteHolder(path, 42, "runner-step"); err != nil {
		t.Fatal(err)
	}
	if h := Holder(path); h != "pid=42 command=runner-step" {
		t.Fatalf("holder %q", h)
	}
	// The lock survives the write of the holder's line (same inode).
	if _, err := TakeFD(int(other.Fd()), path); !errors.Is(err, ErrHeld) {
		t.Fatalf("after WriteHolder: %v", err)
	}
	f.Close()
	release, err := take(-1, path)
	if err != nil {
		t.Fatalf("Take of a free lock: %v", err)
	}
	if err := syscall.Flock(int(other.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Fatal("Take did not hold the lock")
	}
	release()
}

// TestLockDiesWithHolder: a lock taken on a descriptor a child process
// inherited is held by the parent's description after the child exits.
func TestLockDiesWithHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("flock", "-n", "3")
	cmd.ExtraFiles = []*os.File{f}
	if err := cmd.Run(); err != nil {
		t.Fatalf("flock(1): %v", err)
	}
	if _, err := take(-1, path); !errors.Is(err, ErrHeld) {
		t.Fatalf("the child's lock on the shared description: %v", err)
	}
	f.Close()
	release, err := take(-1, path)
	if err != nil {
		t.Fatalf("after the holder closed it: %v", err)
	}
	release()
}

// TestEnter: the porcelain's way in takes the lock on descriptor 9 and
// names itself, shares a hold its description has, and refuses a lock
// another runner holds, naming it.
func TestEnter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	if err := CanOpen(path); err != nil {
		t.Fatal(err)
	}
	onFD := func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Dup2(int(f.Fd()), FD); err != nil {
			t.Fatal(err)
		}
	}
	onFD()
	defer syscall.Close(FD)
	if warn, err := Enter(path, "lk", 42, "runner-step"); warn != nil || err != nil {
		t.Fatalf("a free lock: %v %v", warn, err)
	}
	if h := Holder(path); h != "pid=42 command=runner-step" {
		t.Fatalf("holder %q", h)
	}
	if warn, err := Enter(path, "lk", 43, "runner-loop"); warn != nil || err != nil || Holder(path) != "pid=42 command=runner-step" {
		t.Fatalf("a hold shared: %v %v, holder %q", warn, err, Holder(path))
	}
	keep, err := syscall.Dup(FD) // the earlier description, holding on
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(keep)
	onFD() // a description of its own: the hold is the earlier one's
	_, err = Enter(path, "lk", 44, "runner-step")
	if !errors.Is(err, ErrHeld) || err.Error() != "another runner holds lk (pid=42 command=runner-step); wait for it or stop it" {
		t.Fatalf("a lock held: %v", err)
	}
}
