package git

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStepFacts: the step's variables answer only while the repository
// says the same; a forged root, branch or HEAD, a moved HEAD, a detached
// HEAD or a packed ref falls back to git and gets the truth.
func TestStepFacts(t *testing.T) {
	r := newRepo(t)
	write(t, r, "f", "1\n")
	first := commitAll(t, r, "first")
	other := t.TempDir()

	t.Setenv(StepRoot, other)
	if o, err := Open(r.Root()); err != nil || o.Root() != r.Root() {
		t.Errorf("Open with another root in %s = %v, %v", StepRoot, o, err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(r.Root(), link); err != nil {
		t.Fatal(err)
	}
	t.Setenv(StepRoot, link)
	if o, err := Open(link); err != nil || o.Root() != r.Root() {
		t.Errorf("Open through a symbolic link in %s = %v, %v; want the real root", StepRoot, o, err)
	}
	t.Setenv(StepRoot, r.Root())
	if _, ok := stepRoot(r.Root()); !ok {
		t.Error("stepRoot refused the real root")
	}
	sub := filepath.Join(r.Root(), "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if o, err := Open(sub); err != nil || o.Root() != r.Root() {
		t.Errorf("Open(sub) = %v, %v", o, err)
	}

	t.Setenv(StepBranch, "main")
	t.Setenv(StepHead, first)
	if _, _, ok := r.stepHead(); !ok {
		t.Fatal("stepHead refused the repository's own branch and HEAD")
	}
	write(t, r, "f", "2\n")
	second := commitAll(t, r, "second") // HEAD moved on: the variable is stale
	if h, err := r.HeadCommit(); err != nil || h != second {
		t.Errorf("HeadCommit with a stale %s = %s, %v; want %s", StepHead, h, err, second)
	}
	t.Setenv(StepHead, second)
	t.Setenv(StepBranch, "other")
	if b, err := r.CurrentBranch(); err != nil || b != "main" {
		t.Errorf("CurrentBranch with a forged %s = %q, %v", StepBranch, b, err)
	}
	t.Setenv(StepBranch, "../../HEAD")
	if _, _, ok := r.stepHead(); ok {
		t.Error("stepHead took a branch name outside refs/heads")
	}
	t.Setenv(StepBranch, "main")
	packedThenDetached(t, r, second)
	if c, err := r.ResolveCommit("HEAD~1"); err != nil || c != first {
		t.Errorf("ResolveCommit(HEAD~1) = %s, %v", c, err)
	}
	if got := Strip([]string{"A=1", StepRoot + "=/x", "RUNNER_ITER_DIR=/y", StepHead + "=z", StepBranch + "=", StepGitDirs + "=/g"}); !slices.Equal(got, []string{"A=1", "RUNNER_ITER_DIR=/y"}) {
		t.Errorf("Strip = %q", got)
	}
}

// TestCommitted: the commit id a commit returns is HEAD's, whether read
// from git's files (a loose ref) or, where they are kept another way (a
// detached HEAD, a worktree's .git file), from git.
func TestCommitted(t *testing.T) {
	r := newRepo(t)
	check := func(what, sha string, err error, wantLoose bool) {
		t.Helper()
		head, herr := r.Run("rev-parse", "HEAD")
		if err != nil || herr != nil || sha+"\n" != string(head) {
			t.Errorf("%s: Commit = %s, %v; HEAD is %s", what, sha, err, head)
		}
		if _, _, ok := r.looseHead(); ok != wantLoose {
			t.Errorf("%s: looseHead answered %v, want %v", what, ok, wantLoose)
		}
	}
	sha, err := r.CommitAs("loop", "first")
	check("on a branch", sha, err, true)
	if _, err := r.Run("pack-refs", "--all"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := r.looseHead(); ok {
		t.Error("looseHead answered for a packed ref")
	}
	sha, err = r.CommitAs("loop", "after pack-refs")
	check("after pack-refs", sha, err, true)
	if _, err := r.Run("checkout", "-q", "--detach"); err != nil {
		t.Fatal(err)
	}
	sha, err = r.CommitAs("loop", "detached")
	check("detached", sha, err, false)
	if _, err := r.Run("checkout", "-q", "main"); err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(t.TempDir(), "wt")
	if _, err := r.Run("worktree", "add", "-q", "-b", "side", wt); err != nil {
		t.Fatal(err)
	}
	w := &Repo{root: wt}
	sha, err = w.CommitAs("loop", "in a worktree")
	head, _ := w.Run("rev-parse", "HEAD")
	if _, _, ok := w.looseHead(); ok || err != nil || sha+"\n" != string(head) {
		t.Errorf("in a worktree: Commit = %s, %v (looseHead %v); HEAD is %s", sha, err, ok, head)
	}
}

// TestStatus: one git status gives HEAD, the branch and every changed
// path (staged, unstaged, deleted, untracked, names with spaces), and
// ChangedPathsSince agrees with the two-command way.
func TestStatus(t *testing.T) {
	r := newRepo(t)
	if st, err := r.Status(); err != nil || st.Head != "" || st.Branch != "main" || len(st.Paths) != 0 {
		t.Errorf("Status of an unborn branch = %+v, %v", st, err)
	}
	write(t, r, "a", "1\n")
	write(t, r, "b c", "1\n")
	write(t, r, "gone", "1\n")
	write(t, r, ".gitignore", "ignored\n")
	head := commitAll(t, r, "first")
	write(t, r, "a", "2\n")
	write(t, r, "b c", "2\n")
	if _, err := r.Run("add", "b c"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.Root(), "gone")); err != nil {
		t.Fatal(err)
	}
	write(t, r, "new dir/x", "1\n")
	write(t, r, "ignored", "1\n")
	st, err := r.Status()
	want := []string{"a", "b c", "gone", "new dir/x"}
	if err != nil || st.Head != head || st.Branch != "main" || !slices.Equal(st.Paths, want) {
		t.Errorf("Status = %+v, %v; want head %s, paths %q", st, err, head, want)
	}
	if got, err := r.ChangedPathsSince(head); err != nil || !slices.Equal(got, want) {
		t.Errorf("ChangedPathsSince(HEAD) = %q, %v", got, err)
	}
	// A scope limits the paths to those at or under it, literally.
	if got, err := r.ChangedPathsSince(head, "new dir", "a*", "gone/x"); err != nil || !slices.Equal(got, []string{"new dir/x"}) {
		t.Errorf("ChangedPathsSince(HEAD, scope) = %q, %v", got, err)
	}
	if got, err := r.ChangedPathsSince(head, "b c", "gone"); err != nil || !slices.Equal(got, []string{"b c", "gone"}) {
		t.Errorf("ChangedPathsSince(HEAD, scope) = %q, %v", got, err)
	}
	// Against another commit than HEAD (diff and ls-files), scoped too.
	write(t, r, "other", "1\n")
	second := commitAll(t, r, "second")
	if got, err := r.ChangedPathsSince(head, "other", "new dir", "a/b"); err != nil || !slices.Equal(got, []string{"new dir/x", "other"}) {
		t.Errorf("ChangedPathsSince(first commit, scope) = %q, %v", got, err)
	}
	if _, err := r.Run("reset", "-q", "--soft", head); err != nil {
		t.Fatal(err)
	}
	write(t, r, "later", "1\n")
	if got, err := r.ChangedPathsSince(second, "later", "a"); err != nil || !slices.Equal(got, []string{"later"}) {
		t.Errorf("ChangedPathsSince(not HEAD, scope) = %q, %v", got, err)
	}
	if got, err := r.ChangedPathsSince(second); err != nil || !slices.Equal(got, []string{"later"}) {
		t.Errorf("ChangedPathsSince(not HEAD) = %q, %v", got, err)
	}
	if _, err := r.Run("mv", "a", "moved"); err != nil {
		t.Fatal(err)
	}
	if got, err := r.ChangedPathsSince(head); err != nil || !slices.Contains(got, "a") || !slices.Contains(got, "moved") {
		t.Errorf("ChangedPathsSince after a rename = %q, %v", got, err)
	}
	if _, _, err := r.ShowFile("HEAD", "new dir"); err != nil {
		t.Errorf("ShowFile of a path not in HEAD: %v", err)
	}
	write(t, r, "d/f", "x\n")
	commitAll(t, r, "dir")
	if _, _, err := r.ShowFile("HEAD", "d"); err == nil {
		t.Error("ShowFile of a directory: no error")
	}
}

// TestHeadIs: HEAD is confirmed from the branch's ref file only when it
// names that very commit; an older commit, an empty id, a packed ref or a
// detached HEAD is not confirmed (the caller asks git).
func TestHeadIs(t *testing.T) {
	r := newRepo(t)
	write(t, r, "f", "1\n")
	first := commitAll(t, r, "first")
	write(t, r, "f", "2\n")
	second := commitAll(t, r, "second")
	if !r.HeadIs(second) {
		t.Error("HeadIs refused HEAD's own commit")
	}
	if r.HeadIs(first) || r.HeadIs("") {
		t.Error("HeadIs confirmed a commit HEAD is not")
	}
	if _, err := r.Run("pack-refs", "--all"); err != nil {
		t.Fatal(err)
	}
	if r.HeadIs(second) {
		t.Error("HeadIs answered for a packed ref")
	}
	write(t, r, "f", "3\n")
	third := commitAll(t, r, "third")
	if _, err := r.Run("checkout", "-q", "--detach"); err != nil {
		t.Fatal(err)
	}
	if r.HeadIs(third) {
		t.Error("HeadIs answered for a detached HEAD")
	}
}

// A git command run with -c settings before it is named by its
// subcommand, in errors and trace lines alike.
func TestSubcommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "-z"}, "status"},
		{[]string{"-c", "core.preloadIndex=false", "status", "-z"}, "status"},
		{[]string{"-c", "a.b=1", "-c", "c.d=2", "ls-files"}, "ls-files"},
	} {
		if got := subcommand(c.args); got != c.want {
			t.Errorf("subcommand(%q) = %q, want %q", c.args, got, c.want)
		}
	}
	e := &Error{Args: []string{"-c", "core.preloadIndex=false", "status"}, Msg: "fatal"}
	if e.Error() != "git status: fatal" {
		t.Errorf("Error() = %q", e.Error())
	}
}

// TestStepDirs: OpenDirs gives git's directories with the root; a step's
// command takes them from RUNNER_STEP_GIT_DIRS only in the step's plain
// repository and only when they name its .git (the hooks directory is the
// step's word), else it asks git.
func TestStepDirs(t *testing.T) {
	r := newRepo(t)
	write(t, r, "f", "1\n")
	commitAll(t, r, "first")
	gitDir := filepath.Join(r.Root(), ".git")
	o, d, err := OpenDirs(filepath.Join(r.Root(), "."))
	want := Dirs{Common: gitDir, Git: gitDir, Hooks: filepath.Join(gitDir, "hooks")}
	if err != nil || o.Root() != r.Root() || d != want {
		t.Fatalf("OpenDirs = %v, %+v, %v; want %+v", o, d, err, want)
	}
	if _, _, err := OpenDirs(t.TempDir()); err == nil {
		t.Error("OpenDirs outside a repository: no error")
	}
	told := Dirs{Common: gitDir, Git: gitDir, Hooks: "/told/hooks"}
	t.Setenv(StepRoot, r.Root())
	name, value, _ := strings.Cut(told.Env(), "=")
	t.Setenv(name, value)
	step, err := Open(r.Root())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := step.Dirs(); err != nil || got != told {
		t.Errorf("Dirs in the step = %+v, %v; want the step's %+v", got, err, told)
	}
	if got, err := r.Dirs(); err != nil || got != want {
		t.Errorf("Dirs outside a step = %+v, %v; want git's %+v", got, err, want)
	}
	for _, forged := range []Dirs{
		{Common: "/elsewhere", Git: gitDir, Hooks: "/h"},
		{Common: gitDir, Git: "/elsewhere", Hooks: "/h"},
		{Common: gitDir, Git: gitDir, Hooks: "relative"},
	} {
		_, value, _ := strings.Cut(forged.Env(), "=")
		t.Setenv(name, value)
		if got, err := step.Dirs(); err != nil || got != want {
			t.Errorf("Dirs told %+v = %+v, %v; want git's %+v", forged, got, err, want)
		}
	}
	t.Setenv(name, "one line")
	if got, err := step.Dirs(); err != nil || got != want {
		t.Errorf("Dirs told one line = %+v, %v", got, err)
	}
	if (Dirs{}).Env() != "" {
		t.Error("empty Dirs has a variable")
	}
}

// TestStepHeadInStep: in a step, HEAD and the branch come from git's files
// before the step told them, and are git's answer wherever the files are
// not kept the plain way (a packed ref, a detached HEAD).
func TestStepHeadInStep(t *testing.T) {
	r := newRepo(t)
	write(t, r, "f", "1\n")
	first := commitAll(t, r, "first")
	t.Setenv(StepRoot, r.Root())
	step, err := Open(r.Root())
	if err != nil {
		t.Fatal(err)
	}
	if b, h, ok := step.stepHead(); !ok || b != "main" || h != first {
		t.Errorf("stepHead in the step = %q %q %v", b, h, ok)
	}
	t.Setenv(StepHead, "0123456789012345678901234567890123456789")
	if h, err := step.HeadCommit(); err != nil || h != first {
		t.Errorf("HeadCommit with a forged %s = %s, %v", StepHead, h, err)
	}
	write(t, r, "f", "2\n")
	second := commitAll(t, r, "second")
	packedThenDetached(t, step, second)
	t.Setenv("GIT_COMMON_DIR", t.TempDir())
	if _, _, ok := step.looseHead(); ok {
		t.Error("looseHead answered with GIT_COMMON_DIR set")
	}
}

// TestStepDirsNotPlain: told right, but git's directories are not the
// plain ones (GIT_DIR, a commondir file, a linked worktree): git answers.
func TestStepDirsNotPlain(t *testing.T) {
	r := newRepo(t)
	write(t, r, "f", "1\n")
	commitAll(t, r, "first")
	gitDir := filepath.Join(r.Root(), ".git")
	want := Dirs{Common: gitDir, Git: gitDir, Hooks: filepath.Join(gitDir, "hooks")}
	told := Dirs{Common: gitDir, Git: gitDir, Hooks: "/told/hooks"}
	t.Setenv(StepRoot, r.Root())
	name, value, _ := strings.Cut(told.Env(), "=")
	t.Setenv(name, value)
	step, err := Open(r.Root())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_DIR", gitDir)
	if got, err := step.Dirs(); err != nil || got != want {
		t.Errorf("Dirs with GIT_DIR set = %+v, %v; want git's %+v", got, err, want)
	}
	os.Unsetenv("GIT_DIR")
	common := t.TempDir()
	if _, err := r.Run("init", "-q", "--bare", common); err != nil {
		t.Fatal(err)
	}
	write(t, r, ".git/commondir", common+"\n")
	if got, err := step.Dirs(); err != nil || got.Common != common {
		t.Errorf("Dirs with .git/commondir = %+v, %v; want git's common %s", got, err, common)
	}
	if _, _, ok := step.looseHead(); ok {
		t.Error("looseHead answered with .git/commondir")
	}
	if _, ok := step.plainGitDir(); ok {
		t.Error("plainGitDir answered with .git/commondir")
	}
	if err := os.Remove(filepath.Join(gitDir, "commondir")); err != nil {
		t.Fatal(err)
	}
	if got, _ := step.Dirs(); got != told {
		t.Errorf("Dirs once commondir is gone = %+v; want the step's %+v", got, told)
	}
	// A linked worktree (.git a file): git answers.
	wt := filepath.Join(t.TempDir(), "wt")
	if _, err := r.Run("worktree", "add", "-q", "-b", "side", wt); err != nil {
		t.Fatal(err)
	}
	t.Setenv(StepRoot, wt)
	w, err := Open(wt)
	if err != nil || !w.step {
		t.Fatalf("Open(worktree) in its step = %v, %v", w, err)
	}
	wtDirs := Dirs{Common: filepath.Join(wt, ".git"), Git: filepath.Join(wt, ".git"), Hooks: "/told/hooks"}
	_, value, _ = strings.Cut(wtDirs.Env(), "=")
	t.Setenv(name, value)
	if got, err := w.Dirs(); err != nil || got.Common != gitDir || got.Git == wtDirs.Git {
		t.Errorf("Dirs in a linked worktree = %+v, %v; want git's (common %s)", got, err, gitDir)
	}
}

// packedThenDetached packs r's refs, then detaches its HEAD at head: git
// answers for HEAD and the branch each time, not git's files.
func packedThenDetached(t *testing.T, r *Repo, head string) {
	t.Helper()
	if _, err := r.Run("pack-refs", "--all"); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := r.stepHead(); ok {
		t.Error("stepHead answered for a packed ref")
	}
	if h, err := r.HeadCommit(); err != nil || h != head {
		t.Errorf("HeadCommit after pack-refs = %s, %v", h, err)
	}
	if _, err := r.Run("checkout", "-q", "--detach"); err != nil {
		t.Fatal(err)
	}
	if b, err := r.CurrentBranch(); err != nil || b != "" {
		t.Errorf("CurrentBranch detached = %q, %v", b, err)
	}
}

// TestStatusUnmerged: a path left in conflict by a merge is listed by its
// name (git's unmerged entry carries three object ids before it).
func TestStatusUnmerged(t *testing.T) {
	r := newRepo(t)
	write(t, r, "c d", "base\n")
	commitAll(t, r, "base")
	if _, err := r.Run("switch", "-qc", "other"); err != nil {
		t.Fatal(err)
	}
	write(t, r, "c d", "other\n")
	commitAll(t, r, "other")
	if _, err := r.Run("switch", "-q", "main"); err != nil {
		t.Fatal(err)
	}
	write(t, r, "c d", "main\n")
	commitAll(t, r, "main")
	if _, err := r.Run("merge", "-q", "other"); err == nil {
		t.Fatal("the merge did not conflict")
	}
	if st, err := r.Status(); err != nil || !slices.Equal(st.Paths, []string{"c d"}) {
		t.Errorf("Status in a conflict = %+v, %v; want the path \"c d\"", st, err)
	}
}
