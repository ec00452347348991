package provenance

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// Committer says who makes the commit that the calling process (the
// pre-commit hook's tree-validate --staged) checks, for the runner-owned
// fields (DESIGN.md decision 16), from the processes, never from a
// variable anyone can set: tree.ByLoop when the nearest ancestor that is
// a loop's committer (loop-commit, or step-begin and step-end, which
// commit the step's iterations in process) or tree-edit is a loop's
// committer, tree.ByOperator when it is tree-edit, and in both cases only
// while that process holds the
// repository's .runner/lock open and the lock is taken (runner-step or
// runner-loop holds it for loop-commit, tree-edit takes it itself; an
// agent or a guard inherits no descriptor, so a loop-commit it starts is
// not the runner's); tree.ByHuman otherwise. root is the repository's top
// level. Linux /proc; elsewhere every commit is a human's.
func Committer(root string) tree.Changer {
	lock := filepath.Join(root, filepath.FromSlash(layout.Lock))
	want, err := os.Stat(lock)
	if err != nil || !taken(lock) {
		return tree.ByHuman
	}
	pid := os.Getppid()
	for i := 0; i < 64 && pid > 1; i++ {
		switch comm(pid) {
		case "loop-commit", "step-begin", "step-end":
			if holds(pid, want) {
				return tree.ByLoop
			}
			return tree.ByHuman
		case "tree-edit":
			if holds(pid, want) {
				return tree.ByOperator
			}
			return tree.ByHuman
		}
		pid = parent(pid)
	}
	return tree.ByHuman
}

// taken reports whether someone holds the flock on path: a lock of our own
// open file would not be granted.
func taken(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// holds reports whether process pid has the file want open.
func holds(pid int, want os.FileInfo) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && os.SameFile(st, want) {
			return true
		}
	}
	return false
}

// comm is the command name of process pid, as the kernel keeps it.
func comm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// parent is the parent process id of pid, 0 when unknown.
func parent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses.
	s := string(b)
	k := strings.LastIndexByte(s, ')')
	if k < 0 {
		return 0
	}
	f := strings.Fields(s[k+1:])
	if len(f) < 2 {
		return 0
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		return 0
	}
	return n
}
