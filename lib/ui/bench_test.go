package ui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// bigRepo is a repository with a tree of nodes nodes (bench/gentree) and
// iters finished iterations.
func bigRepo(b *testing.B, nodes, iters int) string {
	b.Helper()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".runner/state"), 0o755); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./bench/gentree", "-n", strconv.Itoa(nodes))
	cmd.Dir = src
	data, err := cmd.Output()
	if err != nil {
		b.Fatalf("gentree: %v", err)
	}
	writeText(b, filepath.Join(dir, ".runner/state/tree.json"), string(data))
	for i := 1; i <= iters; i++ {
		it := filepath.Join(dir, ".runner/iterations/run-big", layout.IterName(i))
		ag := &iterdir.Agent{Version: 1, Backend: "claude", Class: "ok", AgentErrors: []string{}, Usage: iterdir.Usage{InputTokens: int64(1000 + i), OutputTokens: 200, CostUSD: 0.01}}
		writeJSONFile(b, filepath.Join(it, "meta.json"), iterdir.Meta{Version: 1, RunID: "run-big", Iteration: i, NodeID: "n000001",
			Status: "done", Result: "passed", Guard: "pass", Reasons: []string{}, StartedAt: t0.Add(time.Duration(i) * time.Minute), Agent: ag})
		writeJSONFile(b, filepath.Join(it, "begin.json"), iterdir.Begin{Version: 1, RunID: "run-big", Iteration: i, NodeID: "n000001"})
	}
	return dir
}

func benchGet(b *testing.B, h http.Handler, url string, touch func()) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		if touch != nil {
			b.StopTimer()
			touch()
			b.StartTimer()
		}
		req := httptest.NewRequest("GET", url, nil)
		req.Host = "127.0.0.1:1"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%s: %d %s", url, w.Code, w.Body.String()[:min(200, w.Body.Len())])
		}
	}
}

func benchServer(b *testing.B, dir string) http.Handler {
	s, err := New(Options{Root: dir, NoAssets: true})
	if err != nil {
		b.Fatal(err)
	}
	s.AllowHosts(&netAddr{"127.0.0.1:1"})
	return s.Handler()
}

// BenchmarkAPITree10k: /api/tree at 10,000 nodes, the file rewritten before
// every request (no cache hit), and unchanged (served from memory).
func BenchmarkAPITree10k(b *testing.B) {
	dir := bigRepo(b, 10000, 0)
	h := benchServer(b, dir)
	path := filepath.Join(dir, ".runner/state/tree.json")
	data, _ := os.ReadFile(path)
	b.Run("rewritten", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		benchGet(b, h, "/api/tree", func() {
			tmp := path + ".tmp"
			os.WriteFile(tmp, data, 0o644)
			os.Rename(tmp, path)
		})
	})
	b.Run("unchanged", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		benchGet(b, h, "/api/tree", nil)
	})
}

// BenchmarkAPIIterations1000: the iteration list of 1,000 iterations.
func BenchmarkAPIIterations1000(b *testing.B) {
	h := benchServer(b, bigRepo(b, 10, 1000))
	benchGet(b, h, "/api/iterations", nil)
}

// BenchmarkAPIIterationEvent: what a page left open asks for after each
// event of a run of 50 and of 5,000 iterations: the event's iteration
// alone (?id=), and, for comparison, the whole list it asked for before.
func BenchmarkAPIIterationEvent(b *testing.B) {
	for _, n := range []int{50, 5000} {
		h := benchServer(b, bigRepo(b, 10, n))
		b.Run(fmt.Sprintf("id/%d", n), func(b *testing.B) {
			benchGet(b, h, fmt.Sprintf("/api/iterations?id=run-big/%04d", n), nil)
		})
		b.Run(fmt.Sprintf("whole/%d", n), func(b *testing.B) {
			benchGet(b, h, "/api/iterations", nil)
		})
	}
}
