package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
)

func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// An ignored file a session creates where a protected glob names it is
// removed; one there from before the session stays, and so does one under
// a protected directory, or under an append-only glob.
func TestEnforceIgnoredProtected(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "runner/r")
	write := func(p, data string) { t.Helper(); writeFile(t, filepath.Join(dir, p), data) }
	write("ci/check.sh", "exit 1\n")
	write("tests/a.txt", "a\n")
	write(".gitignore", "ci/old.sh\nci/new.sh\ntests/cache\nspec/new.sh\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	base := gitIn(t, dir, "rev-parse", "HEAD")
	write("ci/old.sh", "the user's\n")
	ctime := func(p string) time.Time {
		t.Helper()
		st, err := os.Lstat(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		ct, ok := fsutil.ChangeTime(st)
		if !ok {
			t.Fatal("no change time on this platform")
		}
		return ct
	}
	// The session starts after the user's file, beyond the coarse clock's
	// slack (ci/new.sh is written again until its change time says so),
	// at the instant the session writes ci/new.sh: a file changed at the
	// session's start is the session's. What else it writes comes after.
	for write("ci/new.sh", "new\n"); !ctime("ci/new.sh").After(ctime("ci/old.sh").Add(ctimeSlack)); write("ci/new.sh", "new\n") {
	}
	since := ctime("ci/new.sh")
	for _, p := range []string{"tests/cache", "spec/new.sh"} {
		write(p, "new\n")
	}
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	reasons, err := Enforce(repo, "the agent", "runner/r", base, []string{"ci/*.sh", "tests", "append-only:spec/*.sh"}, since, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 1 || !strings.Contains(reasons[0], "created ci/new.sh at a protected path (protected_paths ci/*.sh)") {
		t.Fatalf("reasons %q", reasons)
	}
	for p, want := range map[string]bool{"ci/new.sh": false, "ci/old.sh": true, "tests/cache": true, "spec/new.sh": true} {
		_, err := os.Lstat(filepath.Join(dir, p))
		if got := err == nil; got != want {
			t.Errorf("%s exists: %v, want %v", p, got, want)
		}
	}
}
