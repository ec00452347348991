//go:build !linux

package fsutil

import (
	"io/fs"
	"time"
)

// ChangeTime: not given on this platform.
func ChangeTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }

// Inode: not given on this platform.
func Inode(fs.FileInfo) (uint64, bool) { return 0, false }

// BirthTime is unknown off Linux.
func BirthTime(string) (time.Time, bool) { return time.Time{}, false }
