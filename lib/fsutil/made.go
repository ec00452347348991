package fsutil

import (
	"os"
	"time"
)

// MadeSince reports whether p (a link itself, not what it names) exists
// and was born or changed at since or later (BirthTime, ChangeTime): made
// by a session that began at since, or moved or rewritten by it. False
// where the filesystem keeps neither time.
func MadeSince(p string, since time.Time) bool {
	st, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if born, ok := BirthTime(p); ok && !born.Before(since) {
		return true
	}
	changed, ok := ChangeTime(st)
	return ok && !changed.Before(since)
}
