package iterdir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUsageBefore: the sum through the previous iteration comes from its
// meta.json, and equals the sum over the agent.json files; without a
// usable meta.json every agent.json below the iteration is summed.
func TestUsageBefore(t *testing.T) {
	runDir := filepath.Join(t.TempDir(), "run-u")
	costs := []float64{0.1, 0.2, 0.30000000000000004, 1e-9}
	var through Usage
	for i, c := range costs {
		dir := filepath.Join(runDir, "000"+string(rune('1'+i)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		u := Usage{InputTokens: int64(10 * (i + 1)), OutputTokens: 1, CachedTokens: 2, CostUSD: c}
		if err := Write(dir, AgentFile, Agent{Version: 1, Usage: u}); err != nil {
			t.Fatal(err)
		}
		before, err := UsageBefore(runDir, i+1)
		if err != nil {
			t.Fatal(err)
		}
		if before != through {
			t.Fatalf("before iteration %d: %+v, want %+v", i+1, before, through)
		}
		through = before.Add(u)
		if i < 2 { // the last two iterations have no meta.json yet
			if err := Write(dir, MetaFile, Meta{Version: 1, RunID: "run-u", Iteration: i + 1, RunUsage: through}); err != nil {
				t.Fatal(err)
			}
		}
	}
	all, err := RunUsage(runDir)
	if err != nil || all != through {
		t.Fatalf("RunUsage %+v (%v), want %+v", all, err, through)
	}
	// meta.json of iteration 2 says what it recorded, not the files.
	if err := Write(filepath.Join(runDir, "0002"), MetaFile, Meta{Version: 1, RunID: "run-u", Iteration: 2, RunUsage: Usage{InputTokens: 7}}); err != nil {
		t.Fatal(err)
	}
	if u, _ := UsageBefore(runDir, 3); u != (Usage{InputTokens: 7}) {
		t.Fatalf("from meta.json: %+v", u)
	}
	// Not usable: another run's, another iteration's, no run_usage,
	// unreadable. Each is summed from agent.json (iterations 1 and 2).
	want, _ := sumUsage(runDir, 3)
	if want.InputTokens != 30 {
		t.Fatalf("sum below 3: %+v", want)
	}
	for name, content := range map[string]string{
		"other run":       `{"run_id":"x","iteration":2,"run_usage":{"input_tokens":7}}`,
		"other iteration": `{"run_id":"run-u","iteration":3,"run_usage":{"input_tokens":7}}`,
		"no run_usage":    `{"run_id":"run-u","iteration":2}`,
		"unreadable":      `{"run_id":`,
	} {
		if err := os.WriteFile(filepath.Join(runDir, "0002", MetaFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if u, err := UsageBefore(runDir, 3); err != nil || u != want {
			t.Errorf("%s: %+v (%v), want %+v", name, u, err, want)
		}
	}
}

// TestUsageSums: each field sums its own field, over iterations whose
// counts all differ; an iteration without agent.json and a directory set
// aside by a recovery count nothing.
func TestUsageSums(t *testing.T) {
	if got := (Usage{1, 2, 3, 0.5}).Add(Usage{10, 200, 3000, 0.25}); got != (Usage{11, 202, 3003, 0.75}) {
		t.Fatalf("Add = %+v", got)
	}
	runDir := filepath.Join(t.TempDir(), "run-s")
	for name, u := range map[string]*Usage{
		"0001":         {InputTokens: 1000, OutputTokens: 20, CachedTokens: 300, CostUSD: 0.5},
		"0002":         {InputTokens: 4, OutputTokens: 50000, CachedTokens: 6, CostUSD: 0.25},
		"0003":         nil, // no agent.json: the agent did not run
		"0004.aborted": {InputTokens: 7, OutputTokens: 7, CachedTokens: 7, CostUSD: 7},
		"0005":         {InputTokens: 90, OutputTokens: 8, CachedTokens: 700000, CostUSD: 0.125},
	} {
		dir := filepath.Join(runDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if u != nil {
			if err := Write(dir, AgentFile, Agent{Version: 1, Usage: *u}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		before int
		want   Usage
	}{
		{0, Usage{1094, 50028, 700306, 0.875}},
		{1, Usage{}},
		{2, Usage{1000, 20, 300, 0.5}},
		{3, Usage{1004, 50020, 306, 0.75}},
		{5, Usage{1004, 50020, 306, 0.75}},
		{6, Usage{1094, 50028, 700306, 0.875}},
	} {
		var got Usage
		var err error
		if c.before == 0 {
			got, err = RunUsage(runDir)
		} else {
			got, err = UsageBefore(runDir, c.before)
		}
		if err != nil || got != c.want {
			t.Errorf("usage before %d: %+v (%v), want %+v", c.before, got, err, c.want)
		}
	}
	// The first iteration has nothing before it, whatever lies beside it.
	zero := filepath.Join(runDir, "0000")
	if err := os.MkdirAll(zero, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(zero, MetaFile, Meta{Version: 1, RunID: "run-s", Iteration: 0, RunUsage: Usage{InputTokens: 5}}); err != nil {
		t.Fatal(err)
	}
	if got, err := UsageBefore(runDir, 1); err != nil || got != (Usage{}) {
		t.Errorf("usage before the first iteration: %+v (%v)", got, err)
	}
	if got, err := RunUsage(filepath.Join(runDir, "missing")); err != nil || got != (Usage{}) {
		t.Errorf("usage of a run with no iterations: %+v (%v)", got, err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "0002", AgentFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := RunUsage(runDir); err == nil {
		t.Error("a broken agent.json summed as nothing")
	}
}
