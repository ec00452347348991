package evidence

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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
