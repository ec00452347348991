package runrecord

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
)

func put(t *testing.T, root, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoFixture is a committed repository of run run-g after two
// iterations: a tree of a passed leaf, a stuck leaf and an open one;
// budgets 9 iterations, 5000 tokens, $2.50; iteration 1 has an
// agent.json, iteration 2 a meta.json whose run_usage and commit (HEAD)
// are what the run has used so far. It returns the root and HEAD.
func repoFixture(t *testing.T) (string, string) {
	t.Helper()
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q", "-b", "runner/run-g")
	leaf := func(id string, passes bool, attempts int) *tree.Node {
		return &tree.Node{ID: id, Order: 1, Title: id, Goal: "g", Acceptance: []string{}, Next: tree.NextExecute,
			Passes: passes, Attempts: attempts, MaxAttempts: 3, Children: []*tree.Node{}}
	}
	a, b, c := leaf("a", true, 1), leaf("b", false, 3), leaf("c", false, 0)
	b.Order, c.Order = 2, 3
	put(t, root, layout.Tree, tree.Encode(&tree.Node{ID: "root", Title: "R", Goal: "g", Acceptance: []string{}, Next: tree.NextDecompose,
		MaxAttempts: 3, Children: []*tree.Node{a, b, c}}))
	cfg := string(config.DefaultTOML())
	for old, repl := range map[string]string{"max_iterations = 100": "max_iterations = 9", "max_tokens = 0": "max_tokens = 5000", "max_cost_usd = 0.0": "max_cost_usd = 2.5"} {
		if !strings.Contains(cfg, old+"\n") {
			t.Fatalf("the default config has no %q", old)
		}
		cfg = strings.Replace(cfg, old+"\n", repl+"\n", 1)
	}
	put(t, root, layout.Config, []byte(cfg))
	gittest.Run(t, root, "add", "-A")
	gittest.Run(t, root, "commit", "-q", "-m", "start")
	head := gittest.Run(t, root, "rev-parse", "HEAD")
	rs := runstate.New("run-g")
	two := 2
	rs.NextIter, rs.LastIter = 3, &two
	put(t, root, layout.RunState, runstate.Encode(rs))
	it1 := filepath.Join(root, layout.IterDir("run-g", 1))
	if err := os.MkdirAll(it1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := iterdir.Write(it1, iterdir.AgentFile, iterdir.Agent{Version: 1, Usage: iterdir.Usage{InputTokens: 7, OutputTokens: 80, CachedTokens: 900, CostUSD: 0.25}}); err != nil {
		t.Fatal(err)
	}
	writeMeta(t, root, iterdir.Meta{Version: 1, RunID: "run-g", Iteration: 2, NodeID: "b", Status: "retry", Guard: "fail", Result: "failed",
		RunUsage: iterdir.Usage{InputTokens: 111, OutputTokens: 22, CachedTokens: 3333, CostUSD: 0.5}, Commit: head})
	return root, head
}

func writeMeta(t *testing.T, root string, m iterdir.Meta) {
	t.Helper()
	dir := filepath.Join(root, layout.IterDir("run-g", 2))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := iterdir.Write(dir, iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
}

// TestReadRepoUsage: the run's usage is the last meta.json's run_usage,
// each field from its own; without a last iteration, the agent.json
// files below the next one; without a run, nothing.
func TestReadRepoUsage(t *testing.T) {
	root, _ := repoFixture(t)
	rp, err := ReadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := rp.Usage(); err != nil || u != (Usage{InputTokens: 111, OutputTokens: 22, CachedTokens: 3333, CostUSD: 0.5}) {
		t.Errorf("usage from meta.json: %+v %v", u, err)
	}
	if b := rp.Budgets(); b != (Budgets{MaxIterations: 9, MaxTokens: 5000, MaxCostUSD: 2.5}) {
		t.Errorf("budgets: %+v", b)
	}
	// Before its last iteration's meta.json, the run's usage is that
	// iteration's run_usage; before the second, the first's agent.json.
	rp.LastMeta = nil
	if u, err := rp.Usage(); err != nil || u != (Usage{InputTokens: 111, OutputTokens: 22, CachedTokens: 3333, CostUSD: 0.5}) {
		t.Errorf("usage before iteration 3: %+v %v", u, err)
	}
	rp.State.NextIter = 2
	if u, err := rp.Usage(); err != nil || u != (Usage{InputTokens: 7, OutputTokens: 80, CachedTokens: 900, CostUSD: 0.25}) {
		t.Errorf("usage from agent.json: %+v %v", u, err)
	}
	rp.State.RunID = nil
	if u, err := rp.Usage(); err != nil || u != (Usage{}) {
		t.Errorf("usage without a run: %+v %v", u, err)
	}
	// A last_iter whose meta.json is not there yet: no meta, no error.
	if err := os.Remove(filepath.Join(root, layout.IterDir("run-g", 2), iterdir.MetaFile)); err != nil {
		t.Fatal(err)
	}
	if rp, err := ReadRepo(root); err != nil || rp.LastMeta != nil {
		t.Errorf("without meta.json: %v %v", rp, err)
	}
}

func TestReadRepoRefuses(t *testing.T) {
	root, _ := repoFixture(t)
	put(t, root, filepath.Join(layout.IterDir("run-g", 2), iterdir.MetaFile), []byte("{"))
	if _, err := ReadRepo(root); err == nil || !strings.HasPrefix(err.Error(), "read "+layout.IterDir("run-g", 2)+"/meta.json: ") {
		t.Errorf("broken meta.json: %v", err)
	}
	put(t, root, layout.Config, []byte("max_iterations = \"x\"\n"))
	if _, err := ReadRepo(root); err == nil {
		t.Error("broken config.toml: no error")
	}
	put(t, root, layout.RunState, []byte("{"))
	if _, err := ReadRepo(root); err == nil {
		t.Error("broken run_state.json: no error")
	}
	put(t, root, layout.Tree, []byte(`{"id": "root"}`))
	if _, err := ReadRepo(root); err == nil || !strings.Contains(err.Error(), "is invalid") || !strings.Contains(err.Error(), "run tree-validate") {
		t.Errorf("invalid tree: %v", err)
	}
	if _, err := ReadRepo(t.TempDir()); err == nil || !strings.Contains(err.Error(), "run runner-init first") {
		t.Errorf("no tree: %v", err)
	}
}

// TestRefresh: counts, usage, budgets, the last iteration and HEAD; a
// committed iteration the record has not seen counts once, and only with
// count.
func TestRefresh(t *testing.T) {
	root, head := repoFixture(t)
	rp, err := ReadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	r := Record{RunID: "run-g", Iterations: 4}
	if err := rp.Refresh(&r, true); err != nil {
		t.Fatal(err)
	}
	last := LastIter{Iter: 2, NodeID: "b", Status: "retry", Guard: "fail", Result: "failed"}
	if r.Iterations != 5 || r.LastIteration == nil || *r.LastIteration != last || r.Head == nil || *r.Head != head ||
		r.Nodes != (Nodes{Total: 4, Passed: 1, Open: 2, Stuck: 1}) || r.Usage.CachedTokens != 3333 || r.Budgets.MaxTokens != 5000 {
		t.Fatalf("first refresh: %+v", r)
	}
	if err := rp.Refresh(&r, true); err != nil || r.Iterations != 5 {
		t.Fatalf("the same iteration counted again: %d %v", r.Iterations, err)
	}
	r = Record{RunID: "run-g", Iterations: 4}
	if err := rp.Refresh(&r, false); err != nil || r.Iterations != 4 || r.LastIteration == nil || *r.LastIteration != last {
		t.Fatalf("without count: %+v %v", r, err)
	}
	r = Record{RunID: "run-g", Iterations: 4, LastIteration: &LastIter{Iter: 1}}
	if err := rp.Refresh(&r, true); err != nil || r.Iterations != 5 {
		t.Fatalf("after iteration 1: %+v %v", r, err)
	}
	// Another run's iteration, or one not committed yet, is not this
	// record's last.
	for _, m := range []*iterdir.Meta{{RunID: "run-x", Iteration: 2, Commit: head}, {RunID: "run-g", Iteration: 2}} {
		rp.LastMeta = m
		r = Record{RunID: "run-g", Iterations: 4}
		if err := rp.Refresh(&r, true); err != nil || r.Iterations != 4 || r.LastIteration != nil {
			t.Fatalf("meta %+v: %+v %v", m, r, err)
		}
	}
}

// TestRefreshHead: HEAD is the meta.json's commit while the branch is
// there, else git's HEAD; outside git there is none.
func TestRefreshHead(t *testing.T) {
	root, head := repoFixture(t)
	rp, err := ReadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	r := Record{RunID: "run-g"}
	// HEAD moved past the meta.json's commit: HEAD is asked of git.
	gittest.Run(t, root, "commit", "-q", "--allow-empty", "-m", "later")
	now := gittest.Run(t, root, "rev-parse", "HEAD")
	rp.LastMeta = &iterdir.Meta{RunID: "run-g", Iteration: 2, Commit: head}
	if err := rp.Refresh(&r, false); err != nil || r.Head == nil || *r.Head != now {
		t.Fatalf("head after a later commit: %v %v", r.Head, err)
	}
	rp.LastMeta = nil
	r.Head = nil
	if err := rp.Refresh(&r, false); err != nil || r.Head == nil || *r.Head != now {
		t.Fatalf("head without meta: %v %v", r.Head, err)
	}
	// Outside git there is no head.
	rp.Root = t.TempDir()
	r = Record{RunID: "run-g"}
	if err := rp.Refresh(&r, false); err != nil || r.Head != nil {
		t.Fatalf("outside git: %v %v", r.Head, err)
	}
}

// TestRefreshUsageError: an agent.json that cannot be read fails the
// refresh.
func TestRefreshUsageError(t *testing.T) {
	root, _ := repoFixture(t)
	rp, err := ReadRepo(root)
	if err != nil {
		t.Fatal(err)
	}
	rp.LastMeta, rp.State.NextIter = nil, 2
	put(t, root, filepath.Join(layout.IterDir("run-g", 1), iterdir.AgentFile), []byte("{"))
	var r Record
	if err := rp.Refresh(&r, true); err == nil || !strings.HasPrefix(err.Error(), "sum the run's usage: ") {
		t.Fatalf("Refresh: %v", err)
	}
}
