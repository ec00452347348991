package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestDependencyDirs: among git's ignored paths, the directories of
// installed dependencies at any depth (by name, or a virtual environment
// by its pyvenv.cfg); not a file, a link, a build output, the runner's
// own, nor a directory whose pyvenv.cfg is no file.
func TestDependencyDirs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"envs/py/", "cfgdir/pyvenv.cfg/"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "envs/py/pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ignored := []string{
		".venv/", "venv/", "node_modules/", "packages/a/node_modules/", "__pypackages__/",
		"envs/py/", "cfgdir/", "build/", "dist/", "notes.txt", "node_modules",
		".runner/node_modules/", ".git/treeloop/", "src/venv/",
	}
	want := []string{".venv", "venv", "node_modules", "packages/a/node_modules", "__pypackages__", "envs/py", "src/venv"}
	if got := DependencyDirs(root, ignored); !slices.Equal(got, want) {
		t.Errorf("DependencyDirs = %q, want %q", got, want)
	}
	if got := DependencyDirs(root, nil); got != nil {
		t.Errorf("DependencyDirs of nothing ignored = %q", got)
	}
}

// TestNewDependencyDirs: a directory listed now that was not before, nor
// under one that was, counts as the session's only when it was born at
// since or later; one born before (an existing virtual environment a new
// ignore rule made ignored) does not.
func TestNewDependencyDirs(t *testing.T) {
	root := t.TempDir()
	mk := func(d string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mk("old/.venv")
	oldBorn, ok := birth(filepath.Join(root, "old/.venv"))
	if !ok {
		t.Fatalf("%s keeps no birth time", root)
	}
	// The session begins once the clock has moved past old/.venv's birth
	// (the filesystem stamps from a coarse clock): a probe's birth says
	// when it has.
	var since time.Time
	for i := 0; ; i++ {
		p := filepath.Join(root, "probe")
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		since, _ = birth(p)
		os.Remove(p)
		if since.After(oldBorn) {
			break
		}
		if i > 1e6 {
			t.Fatal("the clock never moved")
		}
	}
	mk("node_modules/x/node_modules")
	mk("src/node_modules")
	before := []string{"node_modules"}
	now := []string{"node_modules", "node_modules/x/node_modules", "old/.venv", "src/node_modules", "gone/node_modules"}
	made, unknown := NewDependencyDirs(root, before, now, since)
	if !slices.Equal(made, []string{"src/node_modules"}) {
		t.Errorf("made = %q, want [src/node_modules]", made)
	}
	// gone/node_modules does not exist: no birth time to read.
	if !slices.Equal(unknown, []string{"gone/node_modules"}) {
		t.Errorf("unknown = %q, want [gone/node_modules]", unknown)
	}
}
