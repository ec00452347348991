package runnerstatus

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
)

// fixture writes a repository's .runner with a tree of n nodes (fanout
// 10, breadth first) and iters committed iterations of run "run-b".
func fixture(tb testing.TB, n, iters int) string {
	root := tb.TempDir()
	mk := func(i int) *tree.Node {
		return &tree.Node{ID: fmt.Sprintf("n%06d", i), Order: int64(i), Title: fmt.Sprintf("Node %d", i),
			Goal: "Deliver this part, with tests.", Acceptance: []string{"tests pass"}, Next: tree.NextExecute,
			MaxAttempts: 3, Children: []*tree.Node{}}
	}
	nodes := []*tree.Node{mk(0)}
	for i := 1; i < n; i++ {
		c := mk(i)
		p := nodes[(i-1)/10]
		p.Children = append(p.Children, c)
		nodes = append(nodes, c)
	}
	write := func(rel string, data []byte) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write(layout.Tree, tree.Encode(nodes[0]))
	write(layout.Config, config.DefaultTOML())
	rs := runstate.New("run-b")
	rs.NextIter, rs.LastIter = iters+1, &iters
	write(layout.RunState, runstate.Encode(rs))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= iters; i++ {
		dir := filepath.Join(root, layout.IterDir("run-b", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		m := iterdir.Meta{Version: 1, RunID: "run-b", Iteration: i, NodeID: "n000001", Mode: "execute", Status: "retry",
			Result: "retry", Guard: "skipped", Reasons: []string{}, Summary: "a summary", StartedAt: start, EndedAt: start,
			Agent: &iterdir.Agent{Version: 1, Backend: "command", Argv: []string{"agent"}, Class: "ok", AgentErrors: []string{},
				Usage: iterdir.Usage{InputTokens: 1000, OutputTokens: 200, CostUSD: 0.01}},
			RunUsage: iterdir.Usage{InputTokens: int64(1000 * i), OutputTokens: int64(200 * i), CostUSD: 0.01 * float64(i)},
			Commit:   "0123456789abcdef0123456789abcdef01234567"}
		if err := iterdir.Write(dir, iterdir.MetaFile, m); err != nil {
			tb.Fatal(err)
		}
	}
	host, _ := os.Hostname()
	rec := runrecord.Record{Version: 1, ID: "run-b", RunID: "run-b", Branch: "runner/run-b", Status: runrecord.Running,
		StartedAt: start, UpdatedAt: start, Runner: runrecord.Runner{PID: os.Getpid(), Host: host}, Iterations: iters}
	if err := runrecord.Save(filepath.Join(root, layout.RunRecord("run-b")), rec); err != nil {
		tb.Fatal(err)
	}
	return root
}

// The status reads the tree, the last iterations and the record: a
// 10,000-node tree and 1,000 iterations, in process (bench/status-bench.sh
// times the whole command).
func BenchmarkRead10kNodes1kIters(b *testing.B) {
	root := fixture(b, 10000, 1000)
	b.ResetTimer()
	for b.Loop() {
		st, err := Read(root, 5, time.Now(), b.Fatalf)
		if err != nil || st.Iteration.Last != 1000 || len(st.Recent) != 5 || st.Nodes.Total != 10000 {
			b.Fatalf("%v %+v", err, st.Iteration)
		}
	}
}

func TestReadFixture(t *testing.T) {
	st, err := Read(fixture(t, 25, 7), 5, time.Now(), t.Fatalf)
	if err != nil {
		t.Fatal(err)
	}
	if st.Record == nil || *st.Record != "run-b" || st.Status != runrecord.Running || len(st.Recent) != 5 ||
		st.Recent[0].Iter != 3 || st.Recent[4].Tokens != 1200 || st.Usage.InputTokens != 7000 || st.Nodes.Total != 25 ||
		st.Selection.ID != "n000011" || st.Selection.Path != "n000000/n000001/n000011" || st.NextStep != "" {
		t.Fatalf("%+v", st)
	}
}
