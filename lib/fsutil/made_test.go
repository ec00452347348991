package fsutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMadeSince: a file born before since is not made since, one born
// after is, and so is an old one renamed after (its change time moves);
// a path that does not exist is not.
func TestMadeSince(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	if err := os.WriteFile(old, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := BirthTime(old); !ok {
		t.Fatal("this filesystem keeps no birth time")
	}
	since := time.Now().Add(50 * time.Millisecond)
	if MadeSince(old, since) {
		t.Error("an old file made since")
	}
	if !MadeSince(old, time.Now().Add(-time.Hour)) {
		t.Error("a file born after since not made since")
	}
	if MadeSince(filepath.Join(dir, "absent"), time.Time{}) {
		t.Error("an absent path made since")
	}
	// The filesystem stamps from a coarse clock, up to a tick behind.
	for !time.Now().After(since.Add(20 * time.Millisecond)) {
		time.Sleep(5 * time.Millisecond)
	}
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(old, moved); err != nil {
		t.Fatal(err)
	}
	if !MadeSince(moved, since) {
		t.Error("an old file renamed after since not made since")
	}
}
