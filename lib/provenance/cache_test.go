package provenance

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/subject"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// TestDifferentialAuditCache holds the audit through the step's cache to
// the full audit, step by step over random runs in real repositories:
// passes confirmed by their logs, passes without a log, forged pass
// commits whose log disagrees, human commits, and a HEAD moved off the
// cache's commit (a branch that does not descend from it).
func TestDifferentialAuditCache(t *testing.T) {
	seeds := uint64(6)
	if testing.Short() {
		seeds = 2 // the ci tier (just ci) runs all six
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { auditCacheRun(t, rand.New(rand.NewPCG(seed, 7))) })
	}
}

func auditCacheRun(t *testing.T, rnd *rand.Rand) {
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	root := t.TempDir()
	gittest.Setenv(t, root)
	gittest.Run(t, root, "init", "-q", "-b", "main")
	gittest.Run(t, root, "commit", "-q", "--allow-empty", "-m", "initial")
	repo, err := git.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	const run, leaves = "run-a", 12
	logs := filepath.Join(root, filepath.FromSlash(layout.Iterations), run)
	passed := map[string]bool{}
	var fork string
	for iter := 1; iter <= 30; iter++ {
		node := fmt.Sprintf("root.%d", 1+rnd.IntN(leaves))
		status, guard := vocab.StatusDone, vocab.GuardPass
		if rnd.IntN(3) == 0 {
			status, guard = vocab.StatusRetry, vocab.GuardSkipped
		}
		msg := subject.Iteration{Run: run, Iter: iter, Node: node, Status: status, Guard: guard}.String()
		if rnd.IntN(8) == 0 {
			msg = "a human's commit"
		}
		gittest.Run(t, root, "commit", "-q", "--allow-empty", "-m", msg)
		sha := gittest.Run(t, root, "rev-parse", "HEAD")
		result := "retry"
		if status == vocab.StatusDone {
			result = "passed"
			passed[node] = true
		}
		switch rnd.IntN(6) {
		case 0: // no log kept for it
		case 1: // a log that disagrees: a forged pass
			writeMeta(t, logs, iter, iterdir.Meta{NodeID: node, Commit: sha, Result: "failed"})
		default:
			writeMeta(t, logs, iter, iterdir.Meta{NodeID: node, Commit: sha, Result: result})
		}
		if iter == 10 {
			fork = sha
		}
		if iter == 20 {
			// HEAD moves to a branch from iteration 10: the cache's
			// commit is no ancestor of it.
			gittest.Run(t, root, "checkout", "-q", "-b", "other", fork)
		}
		head := gittest.Run(t, root, "rev-parse", "HEAD")
		tr := &tree.Node{ID: "root", Children: []*tree.Node{}}
		for i := 1; i <= leaves; i++ {
			id := fmt.Sprintf("root.%d", i)
			tr.Children = append(tr.Children, &tree.Node{ID: id, Passes: passed[id] || rnd.IntN(10) == 0, Children: []*tree.Node{}})
		}
		next := iter + 1
		if rnd.IntN(10) == 0 {
			next = iter // a pass claimed by an iteration the run never reached
		}
		want, err := Audit(repo, root, run, head, next, tr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := audit(repo, root, run, head, next, tr, true, rnd.IntN(4) != 0)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("iteration %d: through the cache\n%+v\nthe full audit\n%+v", iter, got, want)
		}
	}
	if _, ok := loadCache(cachePath(root, run), run); !ok {
		t.Fatal("no cache was kept")
	}
}

func writeMeta(t *testing.T, logs string, iter int, m iterdir.Meta) {
	t.Helper()
	dir := filepath.Join(logs, layout.IterName(iter))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := iterdir.Write(dir, iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
}
