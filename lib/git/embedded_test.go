package git

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// nestedRepo makes a git repository at dir (relative to r's work tree)
// holding file with data, committed; with separate, its git directory
// lives in separate and dir/.git is a file naming it.
func nestedRepo(t *testing.T, r *Repo, dir, file, data, separate string) {
	t.Helper()
	write(t, r, filepath.Join(dir, file), data)
	p := filepath.Join(r.Root(), dir)
	args := []string{"init", "-q"}
	if separate != "" {
		args = append(args, "--separate-git-dir", separate)
	}
	for _, a := range [][]string{args, {"add", file}, {"commit", "-qm", "nested"}} {
		if _, err := run(p, nil, a...); err != nil {
			t.Fatal(err)
		}
	}
}

// stageAll stages r's work tree (git add -A) and returns its changes
// against base.
func stageAll(t *testing.T, r *Repo, base string) []StagedChange {
	t.Helper()
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	cs, err := r.StagedChanges(base)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestNewGitlinks(t *testing.T) {
	cs := []StagedChange{
		{OldMode: "000000", Mode: "160000", Path: "new"},
		{OldMode: "100644", Mode: "160000", Path: "was-a-file"},
		{OldMode: "160000", Mode: "160000", Path: "bumped"},
		{OldMode: "160000", Mode: "000000", Path: "removed"},
		{OldMode: "000000", Mode: "100644", Path: "a.txt"},
	}
	if got := NewGitlinks(cs); !slices.Equal(got, []string{"new", "was-a-file"}) {
		t.Fatalf("NewGitlinks = %q", got)
	}
	if got := NewGitlinks(nil); got != nil {
		t.Fatalf("NewGitlinks(nil) = %q", got)
	}
}

// TestStageUnembedded: repositories made inside the work tree (one with a
// repository inside it, one whose .git is a file naming its git
// directory) are staged as their files, their .git kept under keep; the
// user's own submodule, a gitlink in the base, stays one, its commit
// moved or not; nothing is left untracked.
func TestStageUnembedded(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	nestedRepo(t, r, "ext", "lib.txt", "lib\n", "")
	base := commitAll(t, r, "base with a submodule")
	if out := mustRun(t, r, "ls-tree", base, "ext"); !strings.HasPrefix(string(out), "160000 commit ") {
		t.Fatalf("the base's submodule: %q", out)
	}
	// The submodule moves on: a new commit in it.
	write(t, r, "ext/lib.txt", "lib 2\n")
	if _, err := run(filepath.Join(r.Root(), "ext"), nil, "commit", "-qam", "bump"); err != nil {
		t.Fatal(err)
	}
	nestedRepo(t, r, "sub", "impl.txt", "impl\n", "")
	nestedRepo(t, r, "sub/inner", "deep.txt", "deep\n", "")
	separate := filepath.Join(t.TempDir(), "sep.git")
	nestedRepo(t, r, "d/file-git", "x.txt", "x\n", separate)
	cs := stageAll(t, r, base)
	if got := NewGitlinks(cs); !slices.Equal(got, []string{"d/file-git", "sub"}) {
		t.Fatalf("staged as gitlinks: %q", got)
	}
	keep := filepath.Join(t.TempDir(), "keep")
	cs, moved, err := r.StageUnembedded(base, keep, cs)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range moved {
		paths = append(paths, e.Path)
		if e.Kept != filepath.Join(keep, filepath.FromSlash(e.Path), ".git") {
			t.Errorf("%s kept in %s", e.Path, e.Kept)
		}
		if _, err := os.Lstat(e.Kept); err != nil {
			t.Errorf("%s's .git: %v", e.Path, err)
		}
		if _, err := os.Lstat(filepath.Join(r.Root(), e.Path, ".git")); !os.IsNotExist(err) {
			t.Errorf("%s/.git is still in the work tree: %v", e.Path, err)
		}
	}
	if !slices.Equal(paths, []string{"d/file-git", "sub", "sub/inner"}) {
		t.Fatalf("moved %q", paths)
	}
	if st, err := os.Lstat(filepath.Join(keep, "d", "file-git", ".git")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("a .git file is kept as the file it is: %v", err)
	}
	got := map[string]string{}
	for _, c := range cs {
		got[c.Path] = c.OldMode + ">" + c.Mode
	}
	want := map[string]string{
		"d/file-git/x.txt":   "000000>100644",
		"sub/impl.txt":       "000000>100644",
		"sub/inner/deep.txt": "000000>100644",
		"ext":                "160000>160000",
	}
	for p, m := range want {
		if got[p] != m {
			t.Errorf("%s staged %q, want %q (all: %v)", p, got[p], m, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("staged %v, want %v", got, want)
	}
	// Everything is staged: no line with a work tree column or untracked.
	for _, l := range strings.Split(strings.TrimSuffix(string(mustRun(t, r, "status", "--porcelain", "--untracked-files=all")), "\n"), "\n") {
		if len(l) < 3 || l[1] != ' ' {
			t.Errorf("left unstaged: %q", l)
		}
	}
	// Nothing to do: the changes as they are, nothing moved, no git run.
	again, moved, err := r.StageUnembedded(base, keep, cs)
	if err != nil || len(moved) != 0 || len(again) != len(cs) {
		t.Errorf("again: %v moved, %d changes of %d, %v", moved, len(again), len(cs), err)
	}
}

// TestStageUnembeddedAfterCrash: a gitlink left in the index by a run cut
// short after its .git was moved is taken out, and the files staged.
func TestStageUnembeddedAfterCrash(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	nestedRepo(t, r, "sub", "impl.txt", "impl\n", "")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(r.Root(), "sub", ".git"), filepath.Join(t.TempDir(), "moved")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddAll(); err != nil { // the gitlink stays
		t.Fatal(err)
	}
	cs, err := r.StagedChanges(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := NewGitlinks(cs); !slices.Equal(got, []string{"sub"}) {
		t.Fatalf("staged as gitlinks: %q", got)
	}
	cs, moved, err := r.StageUnembedded(base, filepath.Join(t.TempDir(), "keep"), cs)
	if err != nil || len(moved) != 0 {
		t.Fatalf("moved %v, %v", moved, err)
	}
	if len(cs) != 1 || cs[0].Path != "sub/impl.txt" || cs[0].Mode != "100644" {
		t.Fatalf("staged %+v", cs)
	}
}

// TestStageUnembeddedRefused: a path git would not name is an error, and
// nothing is moved.
func TestStageUnembeddedRefused(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	keep := filepath.Join(t.TempDir(), "keep")
	for _, p := range []string{"../out", "/abs", ".", "a/../b"} {
		_, moved, err := r.StageUnembedded(base, keep, []StagedChange{{OldMode: "000000", Mode: "160000", Path: p}})
		if err == nil || len(moved) != 0 {
			t.Errorf("%q: moved %v, err %v", p, moved, err)
		}
	}
	if _, err := os.Lstat(keep); !os.IsNotExist(err) {
		t.Errorf("keep made for nothing: %v", err)
	}
}

// TestStageUnembeddedBound: each round finds the repositories its last one
// uncovered; past MaxUnembedRounds of them, nested one in the other, it
// stops with an error, the ones it moved named.
func TestStageUnembeddedBound(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	dirs := []string{"n"}
	for i := 1; i <= MaxUnembedRounds; i++ {
		dirs = append(dirs, dirs[i-1]+"/n")
	}
	for i := len(dirs) - 1; i >= 0; i-- { // the innermost first: its outer one's commit leaves it out
		nestedRepo(t, r, dirs[i], "f.txt", "f\n", "")
	}
	cs := stageAll(t, r, base)
	_, moved, err := r.StageUnembedded(base, filepath.Join(t.TempDir(), "keep"), cs)
	if err == nil || !strings.Contains(err.Error(), "after 8 rounds: "+dirs[MaxUnembedRounds]) {
		t.Fatalf("err = %v", err)
	}
	if len(moved) != MaxUnembedRounds || moved[MaxUnembedRounds-1].Path != dirs[MaxUnembedRounds-1] {
		t.Fatalf("moved %v", moved)
	}
}

// TestStageFilesUnembeds: an iteration's staging keeps each .git in the git
// directory under treeloop/embedded/<run>/<iteration> and says so once a
// repository; with no new gitlink, nothing moves and nothing is said.
func TestStageFilesUnembeds(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	var lines []string
	warn := func(l string) { lines = append(lines, l) }
	write(t, r, "b.txt", "b\n")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	cs, again, err := r.StageFiles(base, "run-u", 12, nil, yes, warn)
	if err != nil || again || len(cs) != 1 || cs[0].Path != "b.txt" || len(lines) != 0 {
		t.Fatalf("no repository: %+v, %v, %q, %v", cs, again, lines, err)
	}
	nestedRepo(t, r, "sub", "f.txt", "f\n", "")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if cs, again, err = r.StageFiles(base, "run-u", 12, nil, yes, warn); err != nil || !again {
		t.Fatalf("again %v, %v", again, err)
	}
	kept := filepath.Join(r.Root(), ".git", "treeloop", "embedded", "run-u", "0012", "sub", ".git")
	if _, err := os.Stat(filepath.Join(kept, "HEAD")); err != nil {
		t.Fatalf("not kept: %v", err)
	}
	if len(lines) != 1 || lines[0] != "sub/ is a git repository made inside the work tree: its files are committed, not a gitlink to its commit; its .git is kept in "+kept {
		t.Fatalf("said %q", lines)
	}
	if len(NewGitlinks(cs)) != 0 || len(cs) != 2 {
		t.Fatalf("staged %+v", cs)
	}
}

// TestPointers: what StageFiles must look closer at: a new gitlink, a
// moved one, a new or changed link; not a file, nor a submodule left at
// its commit.
func TestPointers(t *testing.T) {
	for _, c := range []struct {
		cs   []StagedChange
		want bool
	}{
		{nil, false},
		{[]StagedChange{{OldMode: "100644", Mode: "100644", Path: "a"}, {OldMode: "160000", Mode: "160000", Path: "s"}}, false},
		{[]StagedChange{{OldMode: "000000", Mode: "160000", Path: "s"}}, true},
		// A submodule of the base moved to another commit: the staging
		// records the base's commit instead (stageGitlinksBack).
		{[]StagedChange{{OldMode: "160000", Mode: "160000", OldID: "1111", ID: "2222", Path: "s"}}, true},
		{[]StagedChange{{OldMode: "100644", Mode: "120000", Path: "l"}}, true},
		{[]StagedChange{{OldMode: "120000", Mode: "100644", Path: "l"}}, false},
	} {
		if got := Pointers(c.cs); got != c.want {
			t.Errorf("Pointers(%+v) = %v", c.cs, got)
		}
	}
}

// TestStageFilesSays: StageFiles says whether it staged anything again: not
// for a link inside the work tree, yes for a link out alone; a repository
// whose .git cannot be kept is an error, nothing staged again.
func TestStageFilesSays(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	var lines []string
	warn := func(l string) { lines = append(lines, l) }
	if err := os.Symlink("a.txt", filepath.Join(r.Root(), "inside")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if _, again, err := r.StageFiles(base, "run-s", 1, nil, yes, warn); err != nil || again || len(lines) != 0 {
		t.Fatalf("a link inside: again %v, %q, %v", again, lines, err)
	}
	outside := filepath.Join(t.TempDir(), "o.txt")
	if err := os.WriteFile(outside, []byte("o\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(r.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if _, again, err := r.StageFiles(base, "run-s", 1, nil, yes, warn); err != nil || !again || len(lines) != 1 || lines[0] != "out is a symbolic link out of the work tree, to "+outside+": what it points to is committed in its place" {
		t.Fatalf("a link out: again %v, %q, %v", again, lines, err)
	}
	// The place the .git would be kept is a file.
	if err := os.MkdirAll(filepath.Join(r.Root(), ".git", "treeloop"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Root(), ".git", "treeloop", "embedded"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	nestedRepo(t, r, "sub", "f.txt", "f\n", "")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if _, again, err := r.StageFiles(base, "run-s", 2, nil, yes, warn); err == nil || again {
		t.Fatalf("a .git that cannot be kept: again %v, %v", again, err)
	}
}

// yes is StageFiles' mayCopy without a sandbox.
func yes() bool { return true }

// TestStageFilesUnderSandbox: with the agent confined (mayCopy false, asked
// once), a link out stays a link, and a warning says so; a repository made
// inside the work tree is staged as its files all the same.
func TestStageFilesUnderSandbox(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	secret := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(secret, []byte("hidden\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"key", "key2"} {
		if err := os.Symlink(secret, filepath.Join(r.Root(), l)); err != nil {
			t.Fatal(err)
		}
	}
	nestedRepo(t, r, "sub", "f.txt", "f\n", "")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	asked := 0
	var lines []string
	cs, again, err := r.StageFiles(base, "run-b", 3, nil, func() bool { asked++; return false }, func(l string) { lines = append(lines, l) })
	if err != nil || !again || asked != 1 {
		t.Fatalf("again %v, asked %d, %v", again, asked, err)
	}
	modes := map[string]string{}
	for _, c := range cs {
		modes[c.Path] = c.Mode
	}
	if modes["key"] != "120000" || modes["key2"] != "120000" || modes["sub/f.txt"] != "100644" {
		t.Fatalf("staged %v", modes)
	}
	if st, err := os.Lstat(filepath.Join(r.Root(), "key")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("key is not a link now: %v", err)
	}
	want := "key is a symbolic link out of the work tree, to " + secret + ": committed as the link (under a sandbox the runner copies nothing in)"
	if len(lines) != 3 || lines[1] != want {
		t.Fatalf("said %q", lines)
	}
}
