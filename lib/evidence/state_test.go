package evidence

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
)

// TestStateOfDiffer: a file's content, its executable bit, a link's
// target, a path's coming or going, each makes two States differ; a file
// rewritten with the same bytes, a directory's insides and paths outside
// both do not.
func TestStateOfDiffer(t *testing.T) {
	root := t.TempDir()
	madeFixture(t, root, "a.py", "b.sh", "c.txt", "same.txt", "repo/x", "gone.txt")
	if err := os.Symlink("a.py", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	paths := []string{"a.py", "b.sh", "c.txt", "same.txt", "repo/", "link", "gone.txt", "absent"}
	before, err := StateOf(root, paths)
	if err != nil {
		t.Fatal(err)
	}
	if before["absent"] != "-" || before["repo/"] != "d" || before["link"] != "l a.py" || !strings.HasPrefix(before["a.py"], "f ") {
		t.Fatalf("before %v", before)
	}
	if got := Differ(before, before); got != nil {
		t.Fatalf("a State differs from itself at %v", got)
	}
	set := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set("a.py", "patched")
	if err := os.Chmod(filepath.Join(root, "b.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	set("same.txt", "same.txt")
	set("repo/x", "inside")
	os.Remove(filepath.Join(root, "link"))
	if err := os.Symlink("b.sh", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "gone.txt"))
	set("absent", "new")
	// c.txt is no longer listed (as the base holds it); new.txt is.
	after, err := StateOf(root, []string{"a.py", "b.sh", "same.txt", "repo/", "link", "gone.txt", "absent", "new.txt"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.py", "absent", "b.sh", "c.txt", "gone.txt", "link", "new.txt"}
	if got := Differ(before, after); !slices.Equal(got, want) {
		t.Errorf("differ %v, want %v", got, want)
	}
	if got := Differ(after, before); !slices.Equal(got, want) {
		t.Errorf("differ reversed %v, want %v", got, want)
	}
	if err := os.Mkdir(filepath.Join(root, "locked"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := StateOf(root, []string{"locked/x/y"}); err != nil {
		t.Errorf("a path under a missing directory: %v", err)
	}
}

// submoduleFixture makes a repository whose base has submodule lib (its
// .gitignore ignores build/ and old/) and unused (not checked out), and
// returns its root, the repository and the submodules' paths.
func submoduleFixture(t *testing.T) (string, *git.Repo, []string) {
	t.Helper()
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	lib := filepath.Join(dir, "lib")
	madeFixture(t, lib, "mod.py", ".gitignore")
	if err := os.WriteFile(filepath.Join(lib, ".gitignore"), []byte("build/\nold/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, lib, "init", "-q")
	gittest.Run(t, lib, "add", "-A")
	gittest.Run(t, lib, "commit", "-qm", "lib")
	root := filepath.Join(dir, "root")
	madeFixture(t, root, "main.py")
	gittest.Run(t, root, "init", "-q")
	gittest.Run(t, root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib")
	gittest.Run(t, root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "unused")
	gittest.Run(t, root, "add", "-A")
	gittest.Run(t, root, "commit", "-qm", "base")
	gittest.Run(t, root, "submodule", "deinit", "-q", "unused")
	repo, err := git.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := repo.Submodules("HEAD")
	if err != nil || !slices.Equal(paths, []string{"lib", "unused"}) {
		t.Fatalf("submodules %v, %v", paths, err)
	}
	return root, repo, paths
}

// TestSubmodules: inside a submodule's work tree, what was made since (a
// file, an ignored directory) goes and what stood before stays; a
// changed tracked file is put back as the submodule's HEAD has it, with
// one reason; a submodule not checked out, or one left clean, says
// nothing.
func TestSubmodules(t *testing.T) {
	root, repo, paths := submoduleFixture(t)
	madeFixture(t, root, "lib/old/kept.py")
	since := afterBirthOf(t, filepath.Join(root, "lib/old/kept.py"))
	keep := filepath.Join(t.TempDir(), "keep")
	m, reasons, err := Submodules(repo, "HEAD", paths, since, keep)
	if err != nil || len(m.Removed) != 0 || len(reasons) != 0 {
		t.Fatalf("a clean submodule: %+v, %v, %v", m, reasons, err)
	}
	madeFixture(t, root, "lib/patch.py", "lib/build/x.pyc", "lib/old/new.py")
	if err := os.WriteFile(filepath.Join(root, "lib/mod.py"), []byte("patched"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The submodule not checked out first: the one after it is still
	// looked at.
	m, reasons, err = Submodules(repo, "HEAD", []string{paths[1], paths[0]}, since, keep)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m.Removed)
	if want := []string{"lib/build/", "lib/old/new.py", "lib/patch.py"}; !slices.Equal(m.Removed, want) {
		t.Errorf("removed %v, want %v", m.Removed, want)
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], "submodule lib differed from its commit (mod.py)") {
		t.Errorf("reasons %q", reasons)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "lib/mod.py")); string(data) != "mod.py" {
		t.Errorf("lib/mod.py is %q, not put back", data)
	}
	if _, err := os.Stat(filepath.Join(root, "lib/old/kept.py")); err != nil {
		t.Errorf("what stood before went: %v", err)
	}
}

// TestSubmodulesMoved: a commit made inside a submodule, or a repository
// of the session's own in its place, is put back to the commit the base
// records (the session's .git kept); one whose .git was taken away, or
// that cannot be checked out again (a gitlink without .gitmodules), is
// left uninitialised, its files kept; a reason each, no error.
func TestSubmodulesMoved(t *testing.T) {
	root, repo, paths := submoduleFixture(t)
	since := time.Now()
	keep := filepath.Join(t.TempDir(), "keep")
	lib := filepath.Join(root, "lib")
	recorded := strings.TrimSpace(gittest.Run(t, root, "rev-parse", "HEAD:lib"))
	head := func() string { return strings.TrimSpace(gittest.Run(t, lib, "rev-parse", "HEAD")) }
	if err := os.WriteFile(filepath.Join(lib, "mod.py"), []byte("moved"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, lib, "commit", "-qam", "moved")
	if _, reasons, err := Submodules(repo, "HEAD", paths, since, keep); err != nil || len(reasons) != 1 || !strings.Contains(reasons[0], "submodule lib was moved from its commit "+recorded[:12]) {
		t.Errorf("moved: %q, %v", reasons, err)
	}
	if h := head(); h != recorded {
		t.Errorf("lib's HEAD %s, want %s", h, recorded)
	}
	if err := os.RemoveAll(filepath.Join(lib, ".git")); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, lib, "init", "-q")
	gittest.Run(t, lib, "add", "-A")
	gittest.Run(t, lib, "commit", "-qm", "fake")
	if _, reasons, err := Submodules(repo, "HEAD", paths, since, keep); err != nil || len(reasons) != 1 || !strings.Contains(reasons[0], "was moved") {
		t.Errorf("replaced: %q, %v", reasons, err)
	}
	if h := head(); h != recorded {
		t.Errorf("lib's HEAD %s after a replaced repository, want %s", h, recorded)
	}
	if _, err := os.Stat(filepath.Join(keep, "lib", ".git")); err != nil {
		t.Errorf("the session's repository was not kept: %v", err)
	}
	if err := os.Remove(filepath.Join(lib, ".git")); err != nil {
		t.Fatal(err)
	}
	if _, reasons, err := Submodules(repo, "HEAD", paths, since, keep); err != nil || len(reasons) != 1 || !strings.Contains(reasons[0], "submodule lib holds files but no repository") {
		t.Errorf("no repository: %q, %v", reasons, err)
	}
	if ents, err := os.ReadDir(lib); err != nil || len(ents) != 0 {
		t.Errorf("lib/ after: %v, %v", ents, err)
	}
	if _, err := os.Stat(filepath.Join(keep, "lib.files", "mod.py")); err != nil {
		t.Errorf("the files were not kept: %v", err)
	}
	ext := filepath.Join(root, "ext")
	madeFixture(t, ext, "y.py")
	gittest.Run(t, ext, "init", "-q")
	gittest.Run(t, ext, "add", "-A")
	gittest.Run(t, ext, "commit", "-qm", "ext")
	gittest.Run(t, root, "add", "ext")
	gittest.Run(t, root, "commit", "-qm", "ext")
	extAt := strings.TrimSpace(gittest.Run(t, root, "rev-parse", "HEAD:ext"))
	if err := os.RemoveAll(filepath.Join(ext, ".git")); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, ext, "init", "-q")
	madeFixture(t, ext, "fake.py")
	gittest.Run(t, ext, "add", "-A")
	gittest.Run(t, ext, "commit", "-qm", "fake")
	// lib/, left uninitialised, holds a file again: looked at after ext.
	madeFixture(t, root, "lib/again.py")
	if _, reasons, err := Submodules(repo, "HEAD", []string{"ext", "lib"}, since, keep); err != nil || len(reasons) != 3 || !strings.Contains(reasons[1], "submodule ext could not be checked out at "+extAt[:12]+" again") || !strings.Contains(reasons[2], "submodule lib holds files but no repository") {
		t.Errorf("no way back: %q, %v", reasons, err)
	}
	if _, err := os.Stat(filepath.Join(keep, "ext.files", "fake.py")); err != nil {
		t.Errorf("the session's files were not kept: %v", err)
	}
}

// TestTouch: a file modified before the threshold is stamped as new, one
// modified after it keeps its time, and with the zero threshold every
// file is stamped; a link, a directory and a path gone are left alone.
func TestTouch(t *testing.T) {
	root := t.TempDir()
	madeFixture(t, root, "old.rs", "new.rs", "any.rs", "dir/")
	if err := os.Symlink("old.rs", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-24 * time.Hour)
	for _, p := range []string{"old.rs", "any.rs", "dir"} {
		if err := os.Chtimes(filepath.Join(root, p), long, long); err != nil {
			t.Fatal(err)
		}
	}
	threshold := time.Now().Add(-time.Hour)
	newTime := time.Now().Add(-time.Minute)
	if err := os.Chtimes(filepath.Join(root, "new.rs"), newTime, newTime); err != nil {
		t.Fatal(err)
	}
	mtime := func(p string) time.Time {
		t.Helper()
		st, err := os.Lstat(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return st.ModTime()
	}
	linkTime := mtime("link")
	if err := Touch(root, []string{"old.rs", "new.rs", "dir", "link", "gone.rs"}, threshold); err != nil {
		t.Fatal(err)
	}
	if !mtime("old.rs").After(threshold) {
		t.Errorf("old.rs not stamped: %v", mtime("old.rs"))
	}
	if !mtime("new.rs").Equal(newTime) {
		t.Errorf("new.rs stamped: %v, want %v", mtime("new.rs"), newTime)
	}
	if !mtime("dir").Equal(long) || !mtime("link").Equal(linkTime) {
		t.Errorf("a directory or a link stamped: %v, %v", mtime("dir"), mtime("link"))
	}
	if err := Touch(root, []string{"any.rs"}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if !mtime("any.rs").After(threshold) {
		t.Errorf("any.rs not stamped with the zero threshold: %v", mtime("any.rs"))
	}
}
