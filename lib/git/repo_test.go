package git

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// newRepo makes a repository on branch main in a temp dir, with a fixed
// identity, and returns it opened.
func newRepo(t *testing.T) *Repo {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		t.Setenv(k+"_NAME", "Test")
		t.Setenv(k+"_EMAIL", "test@example.com")
	}
	dir := t.TempDir()
	if _, err := run(dir, nil, "init", "-q", "-b", "main"); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func write(t *testing.T, r *Repo, name, data string) {
	t.Helper()
	p := filepath.Join(r.Root(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func commitAll(t *testing.T, r *Repo, msg string) string {
	t.Helper()
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	sha, err := r.Commit(msg)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func TestOpen(t *testing.T) {
	r := newRepo(t)
	sub := filepath.Join(r.Root(), "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Open(sub)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := filepath.EvalSymlinks(r.Root())
	if g, _ := filepath.EvalSymlinks(got.Root()); g != want {
		t.Errorf("Open(subdir).Root() = %s, want %s", g, want)
	}
	if _, err := Open(t.TempDir()); err == nil {
		t.Errorf("Open outside a repository: no error")
	}
}

func TestCommitsAndBranches(t *testing.T) {
	r := newRepo(t)
	if r.HasCommits() {
		t.Fatal("a new repository has commits")
	}
	if _, err := r.HeadCommit(); err == nil {
		t.Error("HeadCommit on an unborn branch: no error")
	}
	if b, err := r.CurrentBranch(); err != nil || b != "main" {
		t.Errorf("CurrentBranch = %q, %v; want main", b, err)
	}
	write(t, r, "a.txt", "a\n")
	sha := commitAll(t, r, "first\n\nbody line")
	if head, err := r.HeadCommit(); err != nil || head != sha || len(sha) != 40 {
		t.Errorf("HeadCommit = %q, %v; Commit returned %q", head, err, sha)
	}
	if msg, err := r.CommitMessage("HEAD"); err != nil || msg != "first\n\nbody line" {
		t.Errorf("CommitMessage = %q, %v", msg, err)
	}
	if _, err := r.Commit("nothing staged"); err == nil {
		t.Error("Commit with nothing staged: no error")
	}
	empty, err := r.CommitAs("loop", "empty")
	if err != nil || empty == sha {
		t.Errorf("CommitAs = %q, %v", empty, err)
	}
	if log, err := r.LogOneline(5); err != nil || len(log) != 2 || !strings.HasSuffix(log[0], " empty") || !strings.HasSuffix(log[1], " first") {
		t.Errorf("LogOneline = %q, %v", log, err)
	}

	if ok, err := r.BranchExists("runner/x"); err != nil || ok {
		t.Errorf("BranchExists(runner/x) before = %v, %v", ok, err)
	}
	if err := r.CheckoutNewBranch("runner/x"); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.BranchExists("runner/x"); err != nil || !ok {
		t.Errorf("BranchExists(runner/x) after = %v, %v", ok, err)
	}
	if b, _ := r.CurrentBranch(); b != "runner/x" {
		t.Errorf("CurrentBranch = %q, want runner/x", b)
	}
	if err := r.Checkout("main"); err != nil {
		t.Fatal(err)
	}
	if b, _ := r.CurrentBranch(); b != "main" {
		t.Errorf("CurrentBranch = %q, want main", b)
	}
	if err := r.Checkout("no-such-branch"); err == nil {
		t.Error("Checkout of a missing branch: no error")
	}
	if _, err := r.Run("checkout", "-q", "--detach"); err != nil {
		t.Fatal(err)
	}
	if b, err := r.CurrentBranch(); err != nil || b != "" {
		t.Errorf("CurrentBranch on a detached HEAD = %q, %v; want \"\"", b, err)
	}
}

func TestStatusAndChanges(t *testing.T) {
	r := newRepo(t)
	write(t, r, "keep.txt", "k\n")
	write(t, r, "old name.txt", "o\n")
	write(t, r, ".gitignore", "ignored/\n")
	base := commitAll(t, r, "base")
	if st, err := r.StatusPorcelain(); err != nil || len(st) != 0 {
		t.Fatalf("clean status = %q, %v", st, err)
	}
	write(t, r, "keep.txt", "changed\n")
	write(t, r, "new\nline.txt", "n\n")
	write(t, r, "ignored/x.txt", "i\n")
	if _, err := r.Run("mv", "old name.txt", "renamed.txt"); err != nil {
		t.Fatal(err)
	}
	st, err := r.StatusPorcelain()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{" M keep.txt", "R  renamed.txt", "?? new\nline.txt"}
	slices.Sort(st)
	slices.Sort(want)
	if !slices.Equal(st, want) {
		t.Errorf("StatusPorcelain = %q, want %q", st, want)
	}
	changed, err := r.ChangedPathsSince(base)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"keep.txt", "new\nline.txt", "old name.txt", "renamed.txt"}; !slices.Equal(changed, want) {
		t.Errorf("ChangedPathsSince = %q, want %q", changed, want)
	}
	diff, err := r.Diff(base)
	if err != nil || !strings.Contains(string(diff), "+changed") {
		t.Errorf("Diff = %q, %v", diff, err)
	}
}

func TestShowFile(t *testing.T) {
	r := newRepo(t)
	write(t, r, "dir/f.json", "{}\n")
	commitAll(t, r, "c")
	write(t, r, "dir/f.json", "{\"staged\": true}\n")
	if _, err := r.Run("add", "dir/f.json"); err != nil {
		t.Fatal(err)
	}
	if data, ok, err := r.ShowFile("HEAD", "dir/f.json"); err != nil || !ok || string(data) != "{}\n" {
		t.Errorf("ShowFile(HEAD) = %q, %v, %v", data, ok, err)
	}
	if data, ok, err := r.ShowFile(":", "dir/f.json"); err != nil || !ok || string(data) != "{\"staged\": true}\n" {
		t.Errorf("ShowFile(index) = %q, %v, %v", data, ok, err)
	}
	if _, ok, err := r.ShowFile("HEAD", "missing.json"); err != nil || ok {
		t.Errorf("ShowFile(missing) ok=%v err=%v; want false, nil", ok, err)
	}
	if _, _, err := r.ShowFile("no-such-rev", "dir/f.json"); err == nil {
		t.Error("ShowFile(bad rev): no error")
	}
	// Several files in one process, each with its own answer, in order;
	// a name with a line break goes one file at a time, same answers.
	for _, odd := range []string{"missing.json", "odd\nname"} {
		files, err := r.ShowFiles(File{Rev: "HEAD", Path: "dir/f.json"}, File{Rev: "no-such-rev", Path: "dir/f.json"},
			File{Rev: ":", Path: "dir/f.json"}, File{Rev: "HEAD", Path: "dir"}, File{Rev: "HEAD", Path: odd}, File{Path: "dir/f.json"})
		if err != nil || len(files) != 6 {
			t.Fatalf("ShowFiles = %v, %v", files, err)
		}
		for i, want := range []struct {
			data    string
			ok, bad bool
		}{{"{}\n", true, false}, {"", false, true}, {"{\"staged\": true}\n", true, false}, {"", false, true}, {"", false, false}, {"{\"staged\": true}\n", true, false}} {
			if f := files[i]; string(f.Data) != want.data || f.OK != want.ok || (f.Err != nil) != want.bad {
				t.Errorf("ShowFiles[%d] (%s:%s) = %q, %v, %v; want %q, %v, error %v", i, f.Rev, f.Path, f.Data, f.OK, f.Err, want.data, want.ok, want.bad)
			}
		}
	}
}

// git status, which loop-commit check runs before any iteration exists,
// never rewrites the index: it refreshes a stat-dirty index
// under index.lock unless optional locks are off, and a step killed at
// that moment left the lock behind, with no iteration to recover and so
// no stale-lock cleanup, for the next step's `git add` to fail on.
func TestReadsTakeNoIndexLock(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit("one"); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(r.Root(), ".git", "index")
	old := time.Now().Add(-time.Hour)
	// The file's stat info no longer matches the index: a refresh is due.
	if err := os.Chtimes(filepath.Join(r.Root(), "a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(index, old, old); err != nil {
		t.Fatal(err)
	}
	if st, err := r.StatusPorcelain(); err != nil || len(st) != 0 {
		t.Fatalf("status = %q, %v; want clean", st, err)
	}
	fi, err := os.Stat(index)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().Equal(old) {
		t.Errorf("the index was rewritten by a read (mtime %v, was %v): reads must not take index.lock", fi.ModTime(), old)
	}
}
