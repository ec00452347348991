package git

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// outsideLinks commits a base with a link out of r's work tree, then
// makes, uncommitted, links of every kind TestStageOutsideLinks checks,
// and returns the base.
func outsideLinks(t *testing.T, r *Repo) string {
	t.Helper()
	out := t.TempDir()
	other := t.TempDir()
	write(t, r, "a.txt", "a\n")
	if err := os.WriteFile(filepath.Join(other, "users.txt"), []byte("u\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "users.txt"), filepath.Join(r.Root(), "users-link")); err != nil {
		t.Fatal(err)
	}
	base := commitAll(t, r, "base")

	mk := func(p, data string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	mk(filepath.Join(out, "file.txt"), "outside\n", 0o644)
	mk(filepath.Join(out, "tool"), "#!/bin/sh\n", 0o755)
	mk(filepath.Join(out, "dir", "f.txt"), "f\n", 0o644)
	mk(filepath.Join(out, "dir", "sub", "g.txt"), "g\n", 0o644)
	mk(filepath.Join(other, "x.txt"), "x\n", 0o644)
	ln := func(target, name string) {
		t.Helper()
		p := filepath.Join(r.Root(), name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("f.txt", filepath.Join(out, "dir", "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "x.txt"), filepath.Join(out, "dir", "abs")); err != nil {
		t.Fatal(err)
	}
	ln(filepath.Join(out, "file.txt"), "f")
	ln(filepath.Join(out, "tool"), "bin/tool")
	rel, err := filepath.Rel(filepath.Join(r.Root(), "deep"), filepath.Join(out, "file.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ln(rel, "deep/rel")
	ln(filepath.Join(out, "dir"), "d")
	ln("hop", "via")
	ln(filepath.Join(out, "file.txt"), "hop")
	ln("/nonexistent/at/all", "dangling")
	ln("a.txt", "inner")
	return base
}

// TestStageOutsideLinks: links a session made out of the work tree
// (absolute, climbing out, to a directory with links inside, through
// another link) are staged as copies of what they lead to, the copy in the
// work tree too, a file's executable bit kept; a link inside the work
// tree, a dangling one and the base's own link out stay links.
func TestStageOutsideLinks(t *testing.T) {
	r := newRepo(t)
	base := outsideLinks(t, r)
	cs := stageAll(t, r, base)
	tmp := filepath.Join(r.Root(), ".git", "treeloop", "tmp")
	cs, replaced, err := r.StageOutsideLinks(base, tmp, cs, yes)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, o := range replaced {
		paths = append(paths, o.Path)
	}
	// via leads through hop, replaced before it: a link inside the work
	// tree then.
	if want := []string{"bin/tool", "d", "deep/rel", "f", "hop", "d/abs"}; !slices.Equal(paths, want) {
		t.Fatalf("replaced %q, want %q", paths, want)
	}
	modes := map[string]string{}
	for _, c := range cs {
		modes[c.Path] = c.Mode
	}
	for p, m := range map[string]string{
		"f": "100644", "bin/tool": "100755", "deep/rel": "100644", "hop": "100644", "via": "120000",
		"d/f.txt": "100644", "d/sub/g.txt": "100644", "d/l": "120000", "d/abs": "100644",
		"dangling": "120000", "inner": "120000",
	} {
		if modes[p] != m {
			t.Errorf("%s staged as %q, want %q (all: %v)", p, modes[p], m, modes)
		}
	}
	if _, ok := modes["users-link"]; ok {
		t.Errorf("the base's link was staged again")
	}
	if st, err := os.Lstat(filepath.Join(r.Root(), "users-link")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the base's link out is not a link now: %v", err)
	}
	for p, want := range map[string]string{"f": "outside\n", "hop": "outside\n", "d/abs": "x\n", "d/sub/g.txt": "g\n"} {
		if got, err := os.ReadFile(filepath.Join(r.Root(), p)); err != nil || string(got) != want {
			t.Errorf("%s in the work tree: %q, %v", p, got, err)
		}
		if st, err := os.Lstat(filepath.Join(r.Root(), p)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s is not a file now: %v", p, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(r.Root(), "via")); err != nil || target != "hop" {
		t.Errorf("via: %q, %v", target, err)
	}
	if target, err := os.Readlink(filepath.Join(r.Root(), "d", "l")); err != nil || target != "f.txt" {
		t.Errorf("d/l: %q, %v", target, err)
	}
	if ents, err := os.ReadDir(tmp); err != nil || len(ents) != 0 {
		t.Errorf("left in tmp: %v, %v", ents, err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(mustRun(t, r, "status", "--porcelain", "--untracked-files=all")), "\n"), "\n") {
		if len(l) < 3 || l[1] != ' ' {
			t.Errorf("left unstaged: %q", l)
		}
	}
}

// TestStageOutsideLinksBound: past MaxOutsideCopy bytes to copy it stops
// with an error and the link stays.
func TestStageOutsideLinksBound(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	big := filepath.Join(t.TempDir(), "big")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxOutsideCopy + 1); err != nil { // sparse: nothing written
		t.Fatal(err)
	}
	f.Close()
	if err := os.Symlink(big, filepath.Join(r.Root(), "big")); err != nil {
		t.Fatal(err)
	}
	cs := stageAll(t, r, base)
	_, replaced, err := r.StageOutsideLinks(base, filepath.Join(t.TempDir(), "tmp"), cs, yes)
	if err == nil || !strings.Contains(err.Error(), "symbolic link big to "+big+": more than 64 MiB or 10000 files") || len(replaced) != 0 {
		t.Fatalf("replaced %v, err %v", replaced, err)
	}
	if st, err := os.Lstat(filepath.Join(r.Root(), "big")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is gone: %v", err)
	}
}

// TestOutsideCopyBounds: exactly the bound in bytes, or in files, is
// copied; one more of either is refused, in a directory as for a file.
func TestOutsideCopyBounds(t *testing.T) {
	saved := copyBounds
	t.Cleanup(func() { copyBounds = saved })
	copyBounds.bytes, copyBounds.files = 10, 3
	out := t.TempDir()
	mk := func(name string, size int) string {
		p := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name string
		make func() string
		ok   bool
	}{
		{"ten bytes", func() string { return mk("ten", 10) }, true},
		{"eleven bytes", func() string { return mk("eleven", 11) }, false},
		{"three files", func() string {
			mk("three/a", 1)
			mk("three/b", 1)
			mk("three/c/d", 1)
			return filepath.Join(out, "three")
		}, true},
		{"four files", func() string {
			mk("four/a", 1)
			mk("four/b", 1)
			mk("four/c", 1)
			mk("four/d", 1)
			return filepath.Join(out, "four")
		}, false},
		{"eleven bytes in a directory", func() string { mk("dir11/a", 5); mk("dir11/b", 6); return filepath.Join(out, "dir11") }, false},
	} {
		p := c.make()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		var b copyBudget
		err = b.count(p, st)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
		if err != nil && err.Error() != "more than 10 bytes or 3 files to copy in its place" {
			t.Errorf("%s: %q", c.name, err)
		}
	}
}

// TestStageOutsideLinksRounds: a link out whose copy holds a link out,
// and so on, is copied round after round, up to MaxUnembedRounds rounds.
func TestStageOutsideLinksRounds(t *testing.T) {
	for _, c := range []struct {
		levels int
		ok     bool
	}{{MaxUnembedRounds, true}, {MaxUnembedRounds + 1, false}} {
		r := newRepo(t)
		write(t, r, "a.txt", "a\n")
		base := commitAll(t, r, "base")
		// dirs[i] holds f.txt and a link to dirs[i+1], absolute.
		dirs := make([]string, c.levels)
		for i := range dirs {
			dirs[i] = t.TempDir()
			if err := os.WriteFile(filepath.Join(dirs[i], "f.txt"), []byte("f\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i+1 < len(dirs); i++ {
			if err := os.Symlink(dirs[i+1], filepath.Join(dirs[i], "next")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(dirs[0], filepath.Join(r.Root(), "next")); err != nil {
			t.Fatal(err)
		}
		cs := stageAll(t, r, base)
		_, replaced, err := r.StageOutsideLinks(base, filepath.Join(t.TempDir(), "tmp"), cs, yes)
		switch {
		case c.ok && (err != nil || len(replaced) != c.levels):
			t.Errorf("%d levels: replaced %d, %v", c.levels, len(replaced), err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), "still staged after 8 rounds: next/next/next/next/next/next/next/next/next") || len(replaced) != MaxUnembedRounds):
			t.Errorf("%d levels: replaced %d, %v", c.levels, len(replaced), err)
		}
	}
}

func TestSameDevice(t *testing.T) {
	dir := t.TempDir()
	if !sameDevice(dir, dir) {
		t.Error("a directory and itself")
	}
	if sameDevice(dir, "/proc") || sameDevice("/proc", dir) {
		t.Error("a directory and /proc")
	}
	if sameDevice(filepath.Join(dir, "gone"), dir) || sameDevice(dir, filepath.Join(dir, "gone")) {
		t.Error("a path that is not there")
	}
}

// TestStageUncommittedLinks: a link to a file in the work tree that the
// commit would not hold (git ignores it; it lies under a directory named
// .git, which git skips) is staged as a copy of it, also when the
// sessions' sandbox keeps the runner from copying anything in from
// outside; a link to a file the commit holds stays a link.
func TestStageUncommittedLinks(t *testing.T) {
	r := newRepo(t)
	write(t, r, ".gitignore", "/target/\n*.out\n")
	write(t, r, "held.go", "package p\n")
	base := commitAll(t, r, "base")
	write(t, r, "target/mul.rs", "fn mul() {}\n")
	write(t, r, "mul.out", "func Mul() {}\n")
	write(t, r, "hide/.git/mul.go", "package p\n\nfunc Mul() {}\n")
	for target, name := range map[string]string{"target/mul.rs": "mul.rs", "mul.out": "mul.go", "hide/.git/mul.go": "hidden.go", "held.go": "alias.go"} {
		if err := os.Symlink(target, filepath.Join(r.Root(), name)); err != nil {
			t.Fatal(err)
		}
	}
	cs := stageAll(t, r, base)
	no := func() bool { return false }
	cs, replaced, err := r.StageOutsideLinks(base, filepath.Join(r.Root(), ".git", "treeloop", "tmp"), cs, no)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, o := range replaced {
		if !o.Copied || !o.Uncommitted {
			t.Errorf("%s: copied %v, uncommitted %v", o.Path, o.Copied, o.Uncommitted)
		}
		paths = append(paths, o.Path)
	}
	slices.Sort(paths)
	if want := []string{"hidden.go", "mul.go", "mul.rs"}; !slices.Equal(paths, want) {
		t.Errorf("replaced %q, want %q", paths, want)
	}
	modes := map[string]string{}
	for _, c := range cs {
		modes[c.Path] = c.Mode
	}
	for p, m := range map[string]string{"mul.rs": "100644", "mul.go": "100644", "hidden.go": "100644", "alias.go": "120000"} {
		if modes[p] != m {
			t.Errorf("%s staged as %q, want %q", p, modes[p], m)
		}
	}
	if got, err := os.ReadFile(filepath.Join(r.Root(), "mul.go")); err != nil || string(got) != "func Mul() {}\n" {
		t.Errorf("mul.go: %q, %v", got, err)
	}
}

// TestRestoreAttributes: every .gitattributes a session changed, staged,
// removed or added (untracked, or ignored: git reads it all the same), at
// any depth, is put back as the base has it, and named; other files stay
// as the session left them, and so does one in a directory git ignores
// whole (it governs nothing git stages).
func TestRestoreAttributes(t *testing.T) {
	r := newRepo(t)
	write(t, r, ".gitattributes", "* text=auto\n")
	write(t, r, "keep/.gitattributes", "*.bin binary\n")
	write(t, r, "gone/.gitattributes", "*.dat -text\n")
	write(t, r, ".gitignore", "hidden/\n/ign/.gitattributes\n")
	base := commitAll(t, r, "base")
	write(t, r, "keep/.gitattributes", "*.go working-tree-encoding=UTF-7\n")
	if err := os.Remove(filepath.Join(r.Root(), "gone/.gitattributes")); err != nil {
		t.Fatal(err)
	}
	write(t, r, "mulimpl/.gitattributes", "mul.go working-tree-encoding=UTF-7\n")
	write(t, r, "hidden/.gitattributes", "* filter=x\n")
	write(t, r, "ign/.gitattributes", "* filter=y\n")
	write(t, r, "staged/.gitattributes", "* ident\n")
	mustRun(t, r, "add", "staged/.gitattributes")
	write(t, r, "mulimpl/mul.go", "package mulimpl\n")
	back, err := r.RestoreAttributes(base)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(back)
	want := []string{"gone/.gitattributes", "ign/.gitattributes", "keep/.gitattributes", "mulimpl/.gitattributes", "staged/.gitattributes"}
	if !slices.Equal(back, want) {
		t.Errorf("put back %q, want %q", back, want)
	}
	for p, data := range map[string]string{".gitattributes": "* text=auto\n", "keep/.gitattributes": "*.bin binary\n", "gone/.gitattributes": "*.dat -text\n", "mulimpl/mul.go": "package mulimpl\n"} {
		if got, err := os.ReadFile(filepath.Join(r.Root(), p)); err != nil || string(got) != data {
			t.Errorf("%s: %q, %v", p, got, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(r.Root(), "hidden/.gitattributes")); err != nil {
		t.Errorf("hidden/.gitattributes, under an ignored directory, was removed: %v", err)
	}
	for _, p := range []string{"mulimpl/.gitattributes", "ign/.gitattributes", "staged/.gitattributes"} {
		if _, err := os.Lstat(filepath.Join(r.Root(), p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	if out := mustRun(t, r, "ls-files", "staged"); len(out) > 0 {
		t.Errorf("staged/.gitattributes still in the index: %q", out)
	}
	// Again, with nothing to put back: nothing is checked out (a checkout
	// of base with no path would move HEAD off the branch).
	if back, err := r.RestoreAttributes(base); err != nil || len(back) > 0 {
		t.Errorf("again: %q, %v", back, err)
	}
	if head := mustRun(t, r, "symbolic-ref", "-q", "HEAD"); len(head) == 0 {
		t.Errorf("HEAD is no longer a branch")
	}
}

// TestUnembedMade: a git repository a session made inside the work tree,
// whose .gitignore ignores everything in it (so that no listing of the
// work tree showed its files), has its .git moved away: its files are then
// the work tree's, ignored by that .gitignore; a repository of the user's
// from before the session stays one.
func TestUnembedMade(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	commitAll(t, r, "base")
	mustRun(t, r, "init", "-q", "users")
	// The session begins well after the user's repository was made, and
	// its start is taken a tick early, as agent-exec takes it: birth
	// times come from the kernel's coarse clock.
	made := time.Now()
	for !time.Now().After(made.Add(50 * time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
	since := time.Now().Add(-10 * time.Millisecond)
	mustRun(t, r, "init", "-q", "vendor_cache")
	write(t, r, "vendor_cache/.gitignore", "*\n")
	write(t, r, "vendor_cache/fake.py", "x = 1\n")
	// A repository inside another, seen once the outer one's .git has
	// gone (in a second round).
	mustRun(t, r, "init", "-q", "work")
	mustRun(t, r, "init", "-q", "work/inner")
	write(t, r, "work/inner/deep.txt", "deep\n")
	keep := filepath.Join(t.TempDir(), "embedded")
	moved, err := r.UnembedMade(keep, nil, since)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range moved {
		paths = append(paths, e.Path)
	}
	if !slices.Equal(paths, []string{"vendor_cache", "work", "work/inner"}) || moved[0].Kept != filepath.Join(keep, "vendor_cache", ".git") {
		t.Fatalf("moved %+v", moved)
	}
	if _, err := os.Stat(filepath.Join(r.Root(), "vendor_cache", ".git")); !os.IsNotExist(err) {
		t.Errorf("vendor_cache/.git stays: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.Root(), "users", ".git")); err != nil {
		t.Errorf("the user's repository lost its .git: %v", err)
	}
	ignored, err := r.Ignored()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ignored, "vendor_cache/fake.py") || !slices.Contains(ignored, "vendor_cache/.gitignore") {
		t.Errorf("ignored %q: vendor_cache's files are not the work tree's", ignored)
	}
}

// TestUnembedMadeSnapshot: against the list taken before the session, a
// repository whose .git is an old file renamed into place and made to
// name a git directory (its birth time from before the session) is moved
// away, and the user's repository stays one though git worked in it.
func TestUnembedMadeSnapshot(t *testing.T) {
	r := newRepo(t)
	write(t, r, "old.txt", "old\n")
	commitAll(t, r, "base")
	mustRun(t, r, "init", "-q", "users")
	before, err := r.NestedRepos()
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 1 || before[0].Path != "users" {
		t.Fatalf("before %+v", before)
	}
	mustRun(t, r, "-C", "users", "status")
	mustRun(t, r, "init", "-q", "vc/tmp")
	if err := os.Rename(filepath.Join(r.Root(), "vc/tmp/.git"), filepath.Join(r.Root(), "vc/store")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(r.Root(), "old.txt"), filepath.Join(r.Root(), "vc/.git")); err != nil {
		t.Fatal(err)
	}
	write(t, r, "vc/.git", "gitdir: store\n")
	write(t, r, "vc/.gitignore", "*\n")
	write(t, r, "old.txt", "old\n")
	keep := filepath.Join(t.TempDir(), "embedded")
	moved, err := r.UnembedMade(keep, before, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 1 || moved[0].Path != "vc" {
		t.Fatalf("moved %+v, want vc alone", moved)
	}
	if _, err := os.Stat(filepath.Join(r.Root(), "users", ".git")); err != nil {
		t.Errorf("the user's repository lost its .git: %v", err)
	}
}
