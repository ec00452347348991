// Package runlock is the runner lock, .runner/lock: one runner per
// repository (seed 004, DESIGN.md decision 12). A runner holds an flock on
// the file for as long as it lives. runner-loop takes it on descriptor 9
// and its steps inherit that descriptor: a step whose descriptor 9 is the
// lock shares the loop's hold. Nothing else can: agent-exec and guard-run
// start the agent and the guard without inherited descriptors, so an
// agent or a guard that starts a runner is refused like any second runner
// (no variable to trust or to leak). The file holds the holder's line,
// "pid=<pid> command=<name>", for the refusal to name it.
package runlock

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// FD is the descriptor the porcelain holds the lock on.
const FD = 9

// ErrHeld is the refusal when another runner holds the lock.
var ErrHeld = errors.New("another runner holds the lock")

// Shares reports whether descriptor fd is open on the file path (the same
// device and inode).
func Shares(fd int, path string) bool {
	var a, b syscall.Stat_t
	return syscall.Fstat(fd, &a) == nil && syscall.Stat(path, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino
}

// CanOpen checks that the porcelain can open path to take the lock on it
// (created, for appending, as the shell's >> opens it).
func CanOpen(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	return f.Close()
}

// TakeFD takes the lock on descriptor fd, open on path, without waiting:
// ErrHeld when another runner holds it. inherited reports that fd's open
// file description held it already (a step under runner-loop): the
// holder's line is the loop's, and stays.
func TakeFD(fd int, path string) (inherited bool, err error) {
	if !Shares(fd, path) {
		return false, fmt.Errorf("descriptor %d is not open on %s", fd, path)
	}
	// Whether anybody holds it: a description of our own asks.
	probe, err := os.Open(path)
	if err != nil {
		return false, err
	}
	held := syscall.Flock(int(probe.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
	probe.Close() // drops the probe's lock, if it took it
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, ErrHeld
		}
		return false, err
	}
	return held, nil
}

// Take takes the lock on a description of its own, for a command that
// holds it while it works (tree-edit): release lets it go. ErrHeld when a
// runner holds it.
func Take(path string) (release func(), err error) { return take(-1, path) }

// TakeShared is Take for the runner's own commands (tree-edit
// apply-answers): a descriptor 9 inherited from the porcelain, open on
// path and holding the lock, shares that hold.
func TakeShared(path string) (release func(), err error) { return take(FD, path) }

// take is Take sharing the hold of descriptor shared (none when -1).
func take(shared int, path string) (release func(), err error) {
	if Shares(shared, path) && syscall.Flock(shared, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrHeld
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

// Holder is the holder's line the lock file names ("" when unknown).
func Holder(path string) string {
	data, _ := os.ReadFile(path)
	return strings.TrimRight(string(data), "\n")
}

// WriteHolder writes the holder's line, in place (the flock is on the
// file's inode: it is never replaced).
func WriteHolder(path string, pid int, command string) error {
	return os.WriteFile(path, fmt.Appendf(nil, "pid=%d command=%s\n", pid, command), 0o666)
}

// Enter takes the runner lock for the porcelain command (runner-step,
// runner-loop) whose process id is pid, on descriptor FD, open on path
// (runner-enter env opened it; shown is how the lock is named, the path
// relative to the repository's root): shared when FD's description holds
// it already (a step under runner-loop), else taken and the holder's line
// written. err is one line saying what to do, wrapping ErrHeld when
// another runner holds it; warn says the holder's line was not written.
func Enter(path, shown string, pid int, command string) (warn, err error) {
	inherited, err := TakeFD(FD, path)
	if errors.Is(err, ErrHeld) {
		holder := Holder(path)
		if holder == "" {
			holder = "holder unknown"
		}
		return nil, heldError(fmt.Sprintf("another runner holds %s (%s); wait for it or stop it", shown, holder))
	}
	if err != nil {
		return nil, fmt.Errorf("cannot lock %s: %v", shown, fsutil.Cause(err))
	}
	if !inherited {
		if err := WriteHolder(path, pid, command); err != nil {
			return fmt.Errorf("write the holder's line in %s: %v", shown, fsutil.Cause(err)), nil
		}
	}
	return nil, nil
}

// heldError is the refusal when another runner holds the lock, naming
// the holder.
type heldError string

func (e heldError) Error() string { return string(e) }

// Is makes errors.Is(err, ErrHeld) true.
func (e heldError) Is(target error) bool { return target == ErrHeld }
