package eval

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/treeloop/treeloop/lib/schema/full" // LoadSummary and ParseResult validate
)

func result(c, b string, run int, outcome string, iters int, in, out int64, cost float64, total, loop, harness int64) Result {
	r := Result{Version: 1, EvalRunID: "e1", Case: c, Backend: b, Run: run, Outcome: outcome, Iterations: iters}
	r.Usage = Usage{InputTokens: in, OutputTokens: out, CachedTokens: 7 * in, CostUSD: cost}
	r.DurationMS = Durations{Total: total, Loop: loop, Harness: harness}
	return r
}

// cells is a small eval: c1 expects success, c2 states no expect.
func cells() []Cell {
	results := []Result{
		result("c1", "b1", 2, Success, 3, 100, 20, 0.5, 4000, 3000, 1000),
		result("c1", "b1", 1, Fail, 5, 300, 40, 0.25, 8000, 6000, 2000),
		result("c3", "b1", 1, Success, 1, 1, 1, 1, 1, 1, 1), // not a case of this eval
		result("c1", "b1", 3, Success, 4, 200, 30, 1, 6000, 5500, 500),
		result("c2", "b1", 1, Stuck, 2, 10, 1, 0.125, 1000, 900, 100),
		result("c2", "b1", 2, Error, 7, 30, 3, 0.375, 3000, 2000, 1000),
		result("c2", "b2", 1, Success, 1, 5, 5, 0, 10, 8, 2),
	}
	dirs := []string{"d/c1-b1-2", "d/c1-b1-1", "d/c3", "d/c1-b1-3", "d/c2-b1-1", "d/c2-b1-2", "d/c2-b2-1"}
	return BuildCells(results, dirs, []string{"c1", "c2"}, []string{"b1", "b2"}, map[string]string{"c1": Success})
}

func outcomes(kv ...any) map[string]int {
	m := map[string]int{Success: 0, Fail: 0, Stuck: 0, Limit: 0, Timeout: 0, Error: 0}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(int)
	}
	return m
}

// TestBuildCells: every field of every cell, with exact values. c2 has
// no expect: none of its runs is unexpected, whatever their outcomes.
func TestBuildCells(t *testing.T) {
	got := cells()
	lo, hi := Wilson(2, 3)
	lo0, hi0 := Wilson(0, 2)
	lo1, hi1 := Wilson(1, 1)
	want := []Cell{
		{
			Case: "c1", Backend: "b1", N: 3, Successes: 2, Rate: 2.0 / 3, WilsonLow: lo, WilsonHigh: hi,
			Outcomes: outcomes(Success, 2, Fail, 1), Expect: Success, Unexpected: 1,
			MedianIterations: 4, MedianTokens: 230, MedianCostUSD: 0.5, TotalCostUSD: 1.75,
			MedianWallMS: 6000, MedianLoopMS: 5500, MedianHarnessMS: 1000,
			Results: []RunRef{
				{Run: 1, Outcome: Fail, Iterations: 5, Tokens: 340, CostUSD: 0.25, WallMS: 8000, LoopMS: 6000, HarnessMS: 2000, Dir: "d/c1-b1-1"},
				{Run: 2, Outcome: Success, Iterations: 3, Tokens: 120, CostUSD: 0.5, WallMS: 4000, LoopMS: 3000, HarnessMS: 1000, Dir: "d/c1-b1-2"},
				{Run: 3, Outcome: Success, Iterations: 4, Tokens: 230, CostUSD: 1, WallMS: 6000, LoopMS: 5500, HarnessMS: 500, Dir: "d/c1-b1-3"},
			},
		},
		{Case: "c1", Backend: "b2", WilsonLow: 0, WilsonHigh: 1, Outcomes: outcomes(), Expect: Success, Results: []RunRef{}},
		{
			Case: "c2", Backend: "b1", N: 2, Rate: 0, WilsonLow: lo0, WilsonHigh: hi0,
			Outcomes: outcomes(Stuck, 1, Error, 1), Unexpected: 0,
			MedianIterations: 4.5, MedianTokens: 22, MedianCostUSD: 0.25, TotalCostUSD: 0.5,
			MedianWallMS: 2000, MedianLoopMS: 1450, MedianHarnessMS: 550,
			Results: []RunRef{
				{Run: 1, Outcome: Stuck, Iterations: 2, Tokens: 11, CostUSD: 0.125, WallMS: 1000, LoopMS: 900, HarnessMS: 100, Dir: "d/c2-b1-1"},
				{Run: 2, Outcome: Error, Iterations: 7, Tokens: 33, CostUSD: 0.375, WallMS: 3000, LoopMS: 2000, HarnessMS: 1000, Dir: "d/c2-b1-2"},
			},
		},
		{
			Case: "c2", Backend: "b2", N: 1, Successes: 1, Rate: 1, WilsonLow: lo1, WilsonHigh: hi1,
			Outcomes: outcomes(Success, 1), MedianIterations: 1, MedianTokens: 10, MedianWallMS: 10, MedianLoopMS: 8, MedianHarnessMS: 2,
			Results: []RunRef{{Run: 1, Outcome: Success, Iterations: 1, Tokens: 10, WallMS: 10, LoopMS: 8, HarnessMS: 2, Dir: "d/c2-b2-1"}},
		},
	}
	if len(got) != len(want) {
		t.Fatalf("%d cells, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("cell %s/%s:\n got %+v\nwant %+v", want[i].Case, want[i].Backend, got[i], want[i])
		}
	}
}

func summary() Summary {
	return Summary{
		Version: SummaryVersion, EvalRunID: "e1", StartedAt: "2026-01-02T03:04:05Z", EndedAt: "2026-01-02T04:04:05Z",
		Harness: Harness{Commit: "abc", GoVersion: "go1.26", Tools: map[string]string{"git": "git version 2.39"}},
		Args:    []string{"eval-run"}, CaseSetHash: strings.Repeat("ab", 32), Cases: []string{"c1", "c2"}, Backends: []string{"b1", "b2"},
		Runs: 3, Attempts: 12, Finished: 6, Interrupted: true, Cells: cells(),
	}
}

// TestSummaryMarkdown: the table as eval-run prints it; a cell without
// expect shows "-", one with it the runs that reached it.
func TestSummaryMarkdown(t *testing.T) {
	want := `## eval e1: 6 of 12 attempts (interrupted)

| case | backend | success | 95% CI | iterations | tokens | cost $ | wall s | harness s | fail | stuck | limit | timeout | error | expect |
| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |
| c1 | b1 | 2/3 | 21–94% | 4 | 230 | 0.5000 | 6.00 | 1.00 | 1 | 0 | 0 | 0 | 0 | success 2/3 |
| c1 | b2 | 0/0 | 0–100% | 0 | 0 | 0.0000 | 0.00 | 0.00 | 0 | 0 | 0 | 0 | 0 | success 0/0 |
| c2 | b1 | 0/2 | 0–66% | 4.5 | 22 | 0.2500 | 2.00 | 0.55 | 0 | 1 | 0 | 0 | 1 | - |
| c2 | b2 | 1/1 | 21–100% | 1 | 10 | 0.0000 | 0.01 | 0.00 | 0 | 0 | 0 | 0 | 0 | - |

Medians over the runs of each cell; harness s is the eval's own time per run beside the loop's.
`
	if got := summary().Markdown(); got != want {
		t.Errorf("Markdown:\n%s\nwant:\n%s", got, want)
	}
	s := summary()
	s.Interrupted = false
	if got := s.Markdown(); !strings.HasPrefix(got, "## eval e1: 6 of 12 attempts\n\n") {
		t.Errorf("not interrupted: %q", got[:40])
	}
}

// TestLoadSummary: a summary written by Encode reads back equal; a file
// that is not JSON, not a summary, or missing is an error naming it.
func TestLoadSummary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "summary-e1.json")
	s := summary()
	if err := os.WriteFile(p, Encode(s), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSummary(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
	}
	for name, data := range map[string]string{
		"not JSON":    "{",
		"not summary": `{"version": 1}`,
		"wrong type":  strings.Replace(string(Encode(s)), `"runs": 3`, `"runs": "3"`, 1),
	} {
		bad := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		if err := os.WriteFile(bad, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSummary(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := LoadSummary(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing summary loaded")
	}
}

// TestResults: a result written by Encode parses back; a document the
// schema refuses names the pointer; Tokens is input plus output.
func TestResults(t *testing.T) {
	r := result("c1", "b1", 1, Success, 3, 100, 20, 0.5, 4000, 3000, 1000)
	r.Agent = AgentInfo{Backend: "command", Bin: "agents/s"}
	r.StartedAt, r.EndedAt, r.Workspace = "2026-01-02T03:04:05Z", "2026-01-02T03:05:05Z", "/w"
	exit := 0
	r.LoopExit = &exit
	dir := t.TempDir()
	p := filepath.Join(dir, "meta.json")
	if err := os.WriteFile(p, Encode(r), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadResult(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, r)
	}
	if got.Usage.Tokens() != 120 {
		t.Errorf("Tokens = %d, want 120", got.Usage.Tokens())
	}
	if _, err := ParseResult([]byte(strings.Replace(string(Encode(r)), `"run": 1`, `"run": 0`, 1))); err == nil || !strings.HasPrefix(err.Error(), "/run: ") {
		t.Errorf("run 0: %v", err)
	}
	if _, err := ParseResult([]byte("[")); err == nil {
		t.Error("not JSON: parsed")
	}
	if err := os.WriteFile(p, []byte(`{"version": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadResult(p); err == nil || !strings.HasPrefix(err.Error(), p+": ") {
		t.Errorf("bad result: %v", err)
	}
	if _, err := LoadResult(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing result loaded")
	}
}

// TestClassify: each exit code of runner-loop and each count of failed
// checks to its outcome and reason.
func TestClassify(t *testing.T) {
	checks := []CheckResult{
		{Name: "a", Pass: true}, {Name: "b", Reason: "no b"}, {Name: "c", Pass: true}, {Name: "d", Reason: "no d"},
	}
	for _, c := range []struct {
		exit            int
		checks          []CheckResult
		outcome, reason string
		why             string
	}{
		{exit: 0, checks: checks[:1], outcome: Success, reason: "complete; 1 check passed"},
		{exit: 0, outcome: Success, reason: "complete; 0 checks passed"},
		{exit: 0, checks: checks, outcome: Fail, reason: "complete; 2 of 4 checks failed, first b: no b"},
		{exit: 0, checks: checks[3:], outcome: Fail, reason: "complete; 1 of 1 check failed, first d: no d"},
		{exit: 3, why: "w", outcome: Stuck, reason: "runner-loop exited 3 (stuck): w"},
		{exit: 4, why: "w", outcome: Limit, reason: "runner-loop exited 4 (limit): w"},
		{exit: 124, why: "w", outcome: Timeout, reason: "runner-loop exited 124 (iteration timeout): w"},
		{exit: -1, why: "setup failed", outcome: Error, reason: "setup failed"},
		{exit: 1, why: "w", outcome: Error, reason: "runner-loop exited 1: w"},
		{exit: 6, why: "w", outcome: Error, reason: "runner-loop exited 6: w"},
		{exit: 130, why: "w", outcome: Error, reason: "runner-loop exited 130: w"},
	} {
		outcome, reason := Classify(c.exit, c.checks, c.why)
		if outcome != c.outcome || reason != c.reason {
			t.Errorf("Classify(%d, %d checks) = %s %q, want %s %q", c.exit, len(c.checks), outcome, reason, c.outcome, c.reason)
		}
	}
}
