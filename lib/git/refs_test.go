package git

import (
	"strings"
	"testing"
)

// TestDifferentialLooseHead: the loose HEAD reader (gitfile.LooseHead)
// answers as git symbolic-ref and rev-parse where HEAD and the branch are
// kept as loose files (a branch, a nested branch, after a commit), and
// leaves to git what it does not read (an unborn branch, a detached
// HEAD, a packed ref, a ref that is no object id).
func TestDifferentialLooseHead(t *testing.T) {
	r := newRepo(t)
	same := func(state string, want bool) {
		t.Helper()
		branch, head, ok := r.looseHead()
		if ok != want {
			t.Fatalf("%s: looseHead ok = %v, want %v", state, ok, want)
		}
		if !ok {
			return
		}
		gb := strings.TrimSpace(string(mustRun(t, r, "symbolic-ref", "--short", "HEAD")))
		gh := strings.TrimSpace(string(mustRun(t, r, "rev-parse", "HEAD")))
		if branch != gb || head != gh {
			t.Errorf("%s: looseHead = %s %s; git: %s %s", state, branch, head, gb, gh)
		}
	}
	same("unborn", false)
	write(t, r, "f", "1\n")
	first := commitAll(t, r, "first")
	same("a branch", true)
	mustRun(t, r, "checkout", "-q", "-b", "feat/deep/x")
	write(t, r, "f", "2\n")
	commitAll(t, r, "second")
	same("a nested branch", true)
	mustRun(t, r, "checkout", "-q", "--detach", first)
	same("detached", false)
	mustRun(t, r, "checkout", "-q", "main")
	same("back on main", true)
	mustRun(t, r, "pack-refs", "--all")
	same("packed", false)
	write(t, r, "f", "3\n")
	commitAll(t, r, "third") // the branch's loose file again, beside the packed one
	same("loose again", true)
	write(t, r, ".git/refs/heads/main", "ref: refs/heads/feat/deep/x\n")
	same("a symbolic branch ref", false)
}
