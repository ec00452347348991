package git

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMayRefuse: every name git refuses is among those MayRefuse names
// (TestRefused asks git), and plain names are not.
func TestMayRefuse(t *testing.T) {
	for _, c := range []struct {
		path string
		may  bool
	}{
		{"src/main.go", false},
		{"a/b-c_d.e/f", false},
		{".GIT/x.py", true},
		{"sub/.Git./x", true},
		{"git~1/y.py", true},
		{`a\b/w`, true},
		{"x/file:stream", true},
		{".gitignore", true},
		{".github/workflows/ci.yml", true},
		{"caf\u00e9/x", true},
		{"a\tb", true},
		{"a//b", true},
		{"a b/c d", false},
		{"\x80x", true},
		{"x\x1f", true},
	} {
		if got := MayRefuse(c.path); got != c.may {
			t.Errorf("MayRefuse(%q) = %v, want %v", c.path, got, c.may)
		}
	}
}

// TestRefused: git's own answer, for files of the work tree: `.GIT/` and
// `git~1/` (core.protectNTFS, on by default) are refused, the rest not;
// nothing is written to the repository's index.
func TestRefused(t *testing.T) {
	r := newRepo(t)
	write(t, r, "base.txt", "base")
	commitAll(t, r, "base")
	for _, f := range []string{".GIT/x.py", "git~1/y.py", "ok/z.py", ".github/ci.yml"} {
		write(t, r, f, f)
	}
	refused, err := r.Refused([]string{".GIT/x.py", "git~1/y.py", "ok/z.py", ".github/ci.yml"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".GIT/x.py", "git~1/y.py"}; !slices.Equal(refused, want) {
		t.Errorf("refused %v, want %v", refused, want)
	}
	if got, _ := r.Refused(nil); got != nil {
		t.Errorf("none asked: %v", got)
	}
	out, err := r.Run("ls-files")
	if err != nil || string(out) != "base.txt\n" {
		t.Errorf("the index holds %q (%v)", out, err)
	}
}

// TestAddAllMoving: with nothing refused it is git add -A; with a file
// git refuses, that file is moved under keep (its emptied directory
// removed) and the rest staged.
func TestAddAllMoving(t *testing.T) {
	r := newRepo(t)
	write(t, r, "base.txt", "base")
	commitAll(t, r, "base")
	keep := filepath.Join(t.TempDir(), "refused")
	write(t, r, "a.txt", "a")
	if moved, err := r.AddAllMoving(keep); err != nil || moved != nil {
		t.Fatalf("nothing refused: %v, %v", moved, err)
	}
	write(t, r, ".GIT/deep/x.py", "x")
	write(t, r, "b.txt", "b")
	moved, err := r.AddAllMoving(keep)
	if err != nil || !slices.Equal(moved, []string{".GIT/deep/x.py"}) {
		t.Fatalf("moved %v, %v", moved, err)
	}
	if data, err := os.ReadFile(filepath.Join(keep, ".GIT/deep/x.py")); err != nil || string(data) != "x" {
		t.Errorf("kept %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(r.Root(), ".GIT")); !os.IsNotExist(err) {
		t.Errorf(".GIT/ stays: %v", err)
	}
	out, err := r.Run("ls-files")
	if err != nil || string(out) != "a.txt\nb.txt\nbase.txt\n" {
		t.Errorf("staged %q (%v)", out, err)
	}
}

// TestSubmoduleAt: a submodule's changed tracked files and the paths git
// would not commit there, read from its own repository; PutBack makes its
// tracked files its HEAD's again; a directory that is no repository of
// its own is no submodule.
func TestSubmoduleAt(t *testing.T) {
	lib := newRepo(t)
	write(t, lib, "mod.py", "mod")
	write(t, lib, "a", "one letter")
	write(t, lib, ".gitignore", "build/\n")
	commitAll(t, lib, "lib")
	r := newRepo(t)
	if _, err := r.Run("-c", "protocol.file.allow=always", "submodule", "add", "-q", lib.Root(), "sub/lib"); err != nil {
		t.Fatal(err)
	}
	commitAll(t, r, "base")
	if paths, err := r.Submodules("HEAD"); err != nil || !slices.Equal(paths, []string{"sub/lib"}) {
		t.Fatalf("submodules %v, %v", paths, err)
	}
	write(t, r, "sub/lib/mod.py", "patched")
	write(t, r, "sub/lib/a", "patched") // a name of one letter is a change as any other
	write(t, r, "sub/lib/new.py", "new")
	write(t, r, "sub/lib/build/x", "x")
	s, ok, err := r.SubmoduleAt("sub/lib")
	if err != nil || !ok {
		t.Fatalf("SubmoduleAt: %v, %v", ok, err)
	}
	if !slices.Equal(s.Modified, []string{"a", "mod.py"}) || !slices.Equal(s.Others, []string{"build/", "new.py"}) {
		t.Errorf("submodule %+v", s)
	}
	if head := strings.TrimSpace(string(mustRun(t, lib, "rev-parse", "HEAD"))); s.Head != head {
		t.Errorf("submodule HEAD %q, want %q", s.Head, head)
	}
	if err := r.PutBack("sub/lib"); err != nil {
		t.Fatal(err)
	}
	if s, _, _ = r.SubmoduleAt("sub/lib"); len(s.Modified) != 0 || len(s.Others) != 2 {
		t.Errorf("after PutBack %+v", s)
	}
	write(t, r, "plain/x", "x")
	if _, ok, err := r.SubmoduleAt("plain"); ok || err != nil {
		t.Errorf("a plain directory: %v, %v", ok, err)
	}
	write(t, r, "base.txt", "x")
	commitAll(t, r, "no modules file")
	if _, err := r.Run("rm", "-q", ".gitmodules"); err != nil {
		t.Fatal(err)
	}
	commitAll(t, r, "no modules file")
	if paths, err := r.Submodules("HEAD"); paths != nil || err != nil {
		t.Errorf("no .gitmodules: %v, %v", paths, err)
	}
}

// TestGitlinkPutBackClear: Gitlink reads the commit a revision records
// for a submodule (none for a file or an absent path); PutBackCommit
// checks a moved submodule out at it again; ClearSubmodule moves what a
// submodule's directory holds away, each time under a name of its own,
// and says nothing of an empty one.
func TestGitlinkPutBackClear(t *testing.T) {
	lib := newRepo(t)
	write(t, lib, "mod.py", "mod")
	commitAll(t, lib, "lib")
	r := newRepo(t)
	if _, err := r.Run("-c", "protocol.file.allow=always", "submodule", "add", "-q", lib.Root(), "lib"); err != nil {
		t.Fatal(err)
	}
	write(t, r, "file.txt", "x")
	commitAll(t, r, "base")
	recorded := strings.TrimSpace(string(mustRun(t, lib, "rev-parse", "HEAD")))
	for path, want := range map[string]string{"lib": recorded, "file.txt": "", "absent": ""} {
		if got, err := r.Gitlink("HEAD", path); err != nil || got != want {
			t.Errorf("Gitlink(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	sub := filepath.Join(r.Root(), "lib")
	if err := os.WriteFile(filepath.Join(sub, "mod.py"), []byte("moved"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(sub, nil, "commit", "-qam", "moved"); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(t.TempDir(), "keep")
	if err := r.PutBackCommit("lib", recorded, keep); err != nil {
		t.Fatal(err)
	}
	if s, ok, err := r.SubmoduleAt("lib"); err != nil || !ok || s.Head != recorded || len(s.Modified) != 0 {
		t.Errorf("after PutBackCommit: %+v, %v, %v", s, ok, err)
	}
	for i, want := range []string{"lib.files", "lib.files.2"} {
		write(t, r, "lib/x.py", "x")
		to, err := r.ClearSubmodule("lib", keep)
		if err != nil || to != filepath.Join(keep, want) {
			t.Errorf("ClearSubmodule %d: %q, %v", i, to, err)
		}
		if ents, err := os.ReadDir(sub); err != nil || len(ents) != 0 {
			t.Errorf("ClearSubmodule %d left %v, %v", i, ents, err)
		}
	}
	if to, err := r.ClearSubmodule("lib", keep); err != nil || to != "" {
		t.Errorf("an empty directory: %q, %v", to, err)
	}
	if to, err := r.ClearSubmodule("absent", keep); err != nil || to != "" {
		t.Errorf("no directory: %q, %v", to, err)
	}
}
