package evidence

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
)

// madeFixture writes files (relative path: content; a trailing "/" a
// directory) under root.
func madeFixture(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if f[len(f)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// afterBirthOf waits until the filesystem's clock has moved past p's
// birth and its last change (it stamps from a coarse clock, and a file's
// write may land a tick after its birth): the birth of a probe made then
// says when it has, and is returned.
func afterBirthOf(t *testing.T, p string) time.Time {
	t.Helper()
	before, ok := fsutil.BirthTime(p)
	if !ok {
		t.Fatalf("%s keeps no birth time", p)
	}
	if st, err := os.Lstat(p); err == nil {
		if changed, ok := fsutil.ChangeTime(st); ok && changed.After(before) {
			before = changed
		}
	}
	probe := filepath.Join(filepath.Dir(p), ".probe")
	for i := 0; ; i++ {
		if err := os.Mkdir(probe, 0o755); err != nil {
			t.Fatal(err)
		}
		born, _ := fsutil.BirthTime(probe)
		os.Remove(probe)
		if born.After(before) {
			return born
		}
		if i > 1e6 {
			t.Fatal("the clock never moved")
		}
	}
}

// TestRemoveMadeSince: what the session made among the ignored paths goes
// (a file, a directory whole, a new entry inside an old ignored
// directory, a self-ignoring .gitignore, and a new directory they leave
// empty); what was there before stays,
// and so do the insides of a kept dependency directory, the runner's own
// and what git does not list.
func TestRemoveMadeSince(t *testing.T) {
	root := t.TempDir()
	madeFixture(t, root, "build/old.o", "node_modules/pkg/index.js", "local_settings.py", ".runner/x/", "tracked.py")
	since := afterBirthOf(t, filepath.Join(root, "tracked.py"))
	madeFixture(t, root,
		"tests/.gitignore", "tests/slug.py", // behind a self-ignoring rule, beside a test git sees
		"tests/test_x.py",
		"hid/.gitignore", "hid/ci.sh", // listed one by one, their directory new
		"deep/er/x.py", // two new directories above it
		"zz_fix-1.0.dist-info/entry_points.txt", "coverage/lcov-report/prettify.test.js",
		"build/new.py", "build/sub/deep.py", "node_modules/pkg/evil.js", ".runner/x/log", ".git/y", "src/new.py")
	ignored := []string{
		"build/", "coverage/", "local_settings.py", "node_modules/", "tests/.gitignore", "tests/slug.py", "hid/.gitignore", "hid/ci.sh", "deep/er/x.py",
		"zz_fix-1.0.dist-info/", ".runner/", ".git/", "missing.py",
	}
	keep := func(rel string) bool { return rel == "node_modules" }
	m, err := RemoveMadeSince(root, ignored, keep, since)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"build/new.py", "build/sub/", "coverage/", "deep/er/x.py", "hid/.gitignore", "hid/ci.sh", "tests/.gitignore", "tests/slug.py", "zz_fix-1.0.dist-info/"}
	slices.Sort(m.Removed)
	if !slices.Equal(m.Removed, want) || len(m.Unknown) > 0 {
		t.Errorf("removed %q, unknown %q; want %q", m.Removed, m.Unknown, want)
	}
	for _, gone := range append(want, "hid", "deep") {
		if _, err := os.Lstat(filepath.Join(root, gone)); err == nil {
			t.Errorf("%s is still there", gone)
		}
	}
	for _, kept := range []string{"build/old.o", "local_settings.py", "node_modules/pkg/evil.js", ".runner/x/log", ".git/y", "src/new.py", "tracked.py", "tests/test_x.py"} {
		if _, err := os.Lstat(filepath.Join(root, kept)); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
}

// TestRemoveMadeSinceLink: a session that made nothing git ignores
// removes nothing; a link born since is removed, not what it names.
func TestRemoveMadeSinceLink(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	madeFixture(t, outside, "keep.txt")
	madeFixture(t, root, "a.txt")
	since := afterBirthOf(t, filepath.Join(root, "a.txt"))
	if m, err := RemoveMadeSince(root, []string{"a.txt"}, func(string) bool { return false }, since); err != nil || len(m.Removed)+len(m.Unknown) > 0 {
		t.Errorf("nothing new: %+v, %v", m, err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	m, err := RemoveMadeSince(root, []string{"out"}, func(string) bool { return false }, since)
	if err != nil || !slices.Equal(m.Removed, []string{"out"}) {
		t.Errorf("a new link: %+v, %v", m, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep.txt")); err != nil {
		t.Errorf("what the link named is gone: %v", err)
	}
}

// TestSweepMadeOldInodes: what a session put in an ignored place goes
// though its inode is older than the session: a tracked file renamed into
// an ignored place and rewritten (its change time moves), and the files of
// an old directory renamed to node_modules, which SweepMade looks into
// because it is not the node_modules that stood there before (Kept); the
// node_modules that stood there stays whole; a target/ made anew goes
// (pytest, jest and vitest collect tests there).
func TestSweepMadeOldInodes(t *testing.T) {
	root := t.TempDir()
	gittest.Setenv(t, root)
	gittest.Run(t, root, "init", "-q")
	madeFixture(t, root, ".gitignore", "src/sum.js", "node_modules/pkg/index.js", "target/debug/old", "pyproject.toml")
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\ntarget/\ntarget2/\nslug/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, root, "add", "-A")
	gittest.Run(t, root, "commit", "-qm", "base")
	repo, err := git.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := Kept(repo)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0].Rel != "node_modules" {
		t.Fatalf("kept %+v", kept)
	}
	since := afterBirthOf(t, filepath.Join(root, "pyproject.toml"))
	// The session: pyproject.toml's inode becomes slug/__init__.py, src/
	// becomes src/node_modules with a new package in it, and the old
	// node_modules and target/ get new files.
	mv := func(a, b string) {
		t.Helper()
		if err := os.Rename(filepath.Join(root, a), filepath.Join(root, b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "slug"), 0o755); err != nil {
		t.Fatal(err)
	}
	mv("pyproject.toml", "slug/__init__.py")
	madeFixture(t, root, "pyproject.toml")
	mv("src", "nm")
	madeFixture(t, root, "src/sum.js")
	mv("nm", "src/node_modules")
	madeFixture(t, root, "src/node_modules/clamp/index.js", "node_modules/pkg/new.js", "target/debug/new", "target2/x")
	if err := os.RemoveAll(filepath.Join(root, "target")); err != nil {
		t.Fatal(err)
	}
	// target/ made anew by the session, as where none was.
	madeFixture(t, root, "target/debug/new")
	m, err := SweepMade(repo, since, kept)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m.Removed)
	// src/node_modules/sum.js is the old src/sum.js, moved with its
	// directory and never written: the bytes from before the session.
	want := []string{"slug/", "src/node_modules/clamp/", "target/", "target2/"}
	if !slices.Equal(m.Removed, want) {
		t.Errorf("removed %q, want %q", m.Removed, want)
	}
	for _, kept := range []string{"node_modules/pkg/new.js", "src/sum.js", "pyproject.toml", "src/node_modules/sum.js"} {
		if _, err := os.Lstat(filepath.Join(root, kept)); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
}
