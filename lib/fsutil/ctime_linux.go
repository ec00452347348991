//go:build linux

package fsutil

import (
	"io/fs"
	"syscall"
	"time"
)

// ChangeTime is fi's status change time (ctime): set by the kernel at
// every write, rename or attribute change, and by no system call to a
// chosen value. ok is false where the platform does not give it.
func ChangeTime(fi fs.FileInfo) (t time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Unix()), true
}

// Inode is fi's inode number; ok is false where the platform does not
// give it.
func Inode(fi fs.FileInfo) (ino uint64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Ino, true
}
