//go:build linux

package fsutil

import (
	"io/fs"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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

// BirthTime is p's birth time, when its filesystem keeps one (statx's
// STATX_BTIME: ext4, xfs, btrfs, tmpfs); p itself, not what a link names.
// Set by the kernel when p is made, from its coarse clock (up to a tick
// behind), and by no system call afterwards.
func BirthTime(p string) (t time.Time, ok bool) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return time.Time{}, false
	}
	return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)), true
}
