//go:build !linux

package fsutil

import (
	"io/fs"
	"time"
)

// ChangeTime: not given on this platform.
func ChangeTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }
