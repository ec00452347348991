package passcache

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKey: an entry is found by the same inputs and by no other: a
// changed file, a changed text, another kind; an unknown binary makes no
// entry at all.
func TestKey(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	f := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := func() *Key { return New("k").Binary("sh").Text("a", "b").File(f) }
	if _, ok := key().Get(); ok {
		t.Fatal("an entry before any Put")
	}
	key().Put([]byte("v"))
	if v, ok := key().Get(); !ok || string(v) != "v" {
		t.Fatalf("Get = %q, %v", v, ok)
	}
	if _, ok := New("k").Binary("sh").Text("a", "c").File(f).Get(); ok {
		t.Error("another text finds the entry")
	}
	if _, ok := New("other").Binary("sh").Text("a", "b").File(f).Get(); ok {
		t.Error("another kind finds the entry")
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f, later, later); err != nil {
		t.Fatal(err)
	}
	if _, ok := key().Get(); ok {
		t.Error("a changed file finds the entry")
	}
	k := New("k").Binary("no-such-binary-anywhere")
	k.Put([]byte("v"))
	if _, ok := k.Path(); ok {
		t.Error("a binary that cannot be found makes an entry")
	}
}

// TestKeyBinaryPath: a binary named by a path relative to the working
// directory, or by a symbolic link to it, makes the key its absolute path
// makes.
func TestKeyBinaryPath(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	rel, ok1 := New("k").Binary("./tool").Path()
	abs, ok2 := New("k").Binary(bin).Path()
	if !ok1 || !ok2 || rel != abs {
		t.Errorf("./tool's key %q (%v), %s's %q (%v): want the same", rel, ok1, bin, abs, ok2)
	}
	link := filepath.Join(t.TempDir(), "tool-link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	if got, ok := New("k").Binary(link).Path(); !ok || got != abs {
		t.Errorf("the link's key %q (%v), want the binary's %q", got, ok, abs)
	}
}
