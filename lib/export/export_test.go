package export

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/tree"
)

func TestNodeMessage(t *testing.T) {
	n := &tree.Node{ID: "a.2", Title: "  Parse\nthe input ", Goal: "Read it.\n\n\n\nAll of it.   \n", Acceptance: []string{"tests\npass", "no panic"}}
	want := "Parse the input\n\nRead it.\n\nAll of it.\n\nAcceptance:\n- tests pass\n- no panic\n\nTreeloop-Node: a.2\nTreeloop-Guard: pass\nTreeloop-Run: r1\n"
	if got := NodeMessage("r1", n); got != want {
		t.Errorf("NodeMessage:\n%s\nwant:\n%s", got, want)
	}
	bare := NodeMessage("r1", &tree.Node{ID: "b"})
	if bare != "node b\n\nTreeloop-Node: b\nTreeloop-Guard: pass\nTreeloop-Run: r1\n" {
		t.Errorf("a node without title or goal: %q", bare)
	}
}

func TestNotesDropTheTemplate(t *testing.T) {
	tmpl := "# Questions\n\nThe agent may append open questions for a human here; the runner keeps them.\n"
	if got := notes(tmpl); got != "" {
		t.Errorf("the template alone: %q", got)
	}
	if got := notes(tmpl + "- Which port?\n"); got != "- Which port?" {
		t.Errorf("a question: %q", got)
	}
	if got := notes("# My heading kept?\n\nx\n\n# Later heading\n"); got != "x\n\n# Later heading" {
		t.Errorf("a file of the agent's own: %q", got)
	}
}

// runRepo is a git repository whose history is a small run: helpers
// commit trees with the loop's subjects.
type runRepo struct {
	t    *testing.T
	dir  string
	repo *git.Repo
}

func newRunRepo(t *testing.T) *runRepo {
	dir := t.TempDir()
	r := &runRepo{t: t, dir: dir}
	r.git("init", "-q", "-b", "main")
	r.write("README", "base\n")
	r.commit("initial")
	r.git("checkout", "-q", "-b", "runner/r1")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.repo = repo
	return r
}

func (r *runRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.dir, "GIT_AUTHOR_NAME=A", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=C", "GIT_COMMITTER_EMAIL=c@example.com", "GIT_AUTHOR_DATE=2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2026-01-02T03:04:05Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *runRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// tree writes .runner/state/tree.json: a root with leaves a and b, the
// given ones passed.
func (r *runRepo) tree(passed ...string) {
	leaf := func(id string) *tree.Node {
		n := &tree.Node{ID: id, Order: int64(len(id)), Title: "Leaf " + id, Goal: "Do " + id, Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 3, Children: []*tree.Node{}}
		for _, p := range passed {
			n.Passes = n.Passes || p == id
		}
		return n
	}
	a, b := leaf("a"), leaf("b")
	root := &tree.Node{ID: "root", Title: "Goal", Goal: "All of it", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3, Passes: a.Passes && b.Passes, Children: []*tree.Node{a, b}}
	r.write(".runner/state/tree.json", string(tree.Encode(root)))
}

func (r *runRepo) commit(msg string) string {
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// A leaf that passed without changing code gets no commit; a retry's
// change is carried by the commit of the leaf that passes after it; the
// tree outside .runner/ is the tip's.
func TestPlanAndBuild(t *testing.T) {
	r := newRunRepo(t)
	r.tree()
	r.commit("chore(loop): start run r1")
	r.write("a.txt", "draft\n")
	r.commit("chore(loop): run r1 iter 1 node a status=done guard=fail")
	r.write("a.txt", "final\n")
	r.tree("a")
	passA := r.commit("chore(loop): run r1 iter 2 node a status=done guard=pass")
	r.tree("a", "b")
	r.commit("chore(loop): run r1 iter 3 node b status=done guard=pass")

	p, err := NewPlan(r.repo, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 2 || p.Steps[0].Node.ID != "a" || !p.Steps[0].Changed || p.Steps[1].Changed || p.Steps[0].Loop.SHA != passA {
		t.Fatalf("steps %+v", p.Steps)
	}
	if len(p.Open) != 0 || p.Unexported != nil || p.Base != r.git("rev-parse", "main") {
		t.Fatalf("open %v unexported %v base %s", p.Open, p.Unexported, p.Base)
	}
	res, err := Build(r.repo, p, Options{Branch: "out"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Commits) != 1 || res.Commits[0].Nodes[0] != "a" {
		t.Fatalf("commits %+v", res.Commits)
	}
	if got := r.git("ls-tree", "-r", "--name-only", "out"); got != "README\na.txt" {
		t.Errorf("the export's files: %q", got)
	}
	if got := r.git("show", "out:a.txt"); got != "final" {
		t.Errorf("a.txt: %q", got)
	}
	if got := r.git("log", "-1", "--format=%an %ad %cn", "--date=iso-strict", "out"); got != "A 2026-01-02T03:04:05+00:00 C" {
		t.Errorf("the loop commit's identities and date: %q", got)
	}
	// Onto a commit that already has the change: no empty commit, no branch.
	r.git("branch", "same", "out")
	if _, err := Build(r.repo, p, Options{Branch: "out2", Onto: "same"}); err == nil || !strings.Contains(err.Error(), "nothing to export onto it") {
		t.Fatalf("onto a commit with the change: %v", err)
	}
	if ok, _ := r.repo.BranchExists("out2"); ok {
		t.Fatal("a branch was written")
	}
}

// A subject that claims a pass its tree does not hold is not believed;
// a leaf no commit passed is an error, not a silent gap.
func TestPlanChecksTheClaim(t *testing.T) {
	r := newRunRepo(t)
	r.tree()
	r.commit("chore(loop): start run r1")
	r.write("a.txt", "x\n")
	r.commit("chore(loop): run r1 iter 1 node a status=done guard=pass") // the tree says a is open
	r.tree("a")
	r.commit("chore(loop): operator retry node a")
	_, err := NewPlan(r.repo, "r1")
	if err == nil || !strings.Contains(err.Error(), "says node a passed, but the tree it holds does not") {
		t.Fatalf("err = %v", err)
	}

	r2 := newRunRepo(t)
	r2.tree()
	r2.commit("chore(loop): start run r1")
	r2.tree("b")
	r2.commit("a hand-made commit")
	if _, err := NewPlan(r2.repo, "r1"); err == nil || !strings.Contains(err.Error(), "no iteration commit of the run passed it") {
		t.Fatalf("err = %v", err)
	}
}

// Nothing passed with a change: nothing to export, and no branch.
func TestBuildNothing(t *testing.T) {
	r := newRunRepo(t)
	r.tree()
	r.commit("chore(loop): start run r1")
	r.write("b.txt", "x\n")
	r.commit("chore(loop): run r1 iter 1 node b status=done guard=fail")
	p, err := NewPlan(r.repo, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Open) != 2 || p.Unexported == nil || p.Unexported.Iter != 1 {
		t.Fatalf("open %v unexported %+v", p.Open, p.Unexported)
	}
	if _, err := Build(r.repo, p, Options{Branch: "out"}); err != ErrNothing {
		t.Fatalf("err = %v", err)
	}
	if ok, _ := r.repo.BranchExists("out"); ok {
		t.Fatal("a branch was written")
	}
}
