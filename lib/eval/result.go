package eval

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
	"github.com/treeloop/treeloop/lib/vocab"
)

// ResultVersion is the version of meta.json (schemas/eval_result.v1.schema.json).
const ResultVersion = 1

// Result is one attempt's meta.json: a case run once with one backend
// (seed 000 §13.5). It is written atomically when the attempt ends; a
// result that parses is final, and a resumed eval skips it.
type Result struct {
	Version    int       `json:"version"`
	EvalRunID  string    `json:"eval_run_id"`
	Case       string    `json:"case"`
	Backend    string    `json:"backend"` // the --backend name
	Agent      AgentInfo `json:"agent"`
	Run        int       `json:"run"` // 1-based index among --runs
	Outcome    string    `json:"outcome"`
	Reason     string    `json:"reason"`
	Expect     string    `json:"expect"`    // the case's expect, "" when not stated
	LoopExit   *int      `json:"loop_exit"` // runner-loop's exit code; null when it did not run
	RunID      string    `json:"run_id"`
	Iterations int       `json:"iterations"`
	Usage      Usage     `json:"usage"`
	Checks     struct {
		Passed int `json:"passed"`
		Failed int `json:"failed"`
	} `json:"checks"`
	StartedAt  string    `json:"started_at"`
	EndedAt    string    `json:"ended_at"`
	DurationMS Durations `json:"duration_ms"`
	Workspace  string    `json:"workspace"`
	ReplayOf   string    `json:"replay_of"` // the eval run whose cassette was replayed, "" when none
}

// AgentInfo is the agent configuration an attempt ran with.
type AgentInfo struct {
	Backend string `json:"backend"`
	Bin     string `json:"bin"`
	Model   string `json:"model"` // configured, else the one the backend reported
}

// Usage sums the agent's reported usage over the run's iterations.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Tokens is input plus output tokens.
func (u Usage) Tokens() int64 { return u.InputTokens + u.OutputTokens }

// Durations splits an attempt's wall time: Loop is runner-loop itself;
// Harness = Total - Loop is the eval harness's own overhead (workspace,
// runner-init, runner-start, artifacts, checks).
type Durations struct {
	Total   int64 `json:"total"`
	Setup   int64 `json:"setup"`
	Loop    int64 `json:"loop"`
	Checks  int64 `json:"checks"`
	Capture int64 `json:"capture"`
	Harness int64 `json:"harness"`
}

// ParseResult decodes and validates a meta.json.
func ParseResult(data []byte) (Result, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return Result{}, err
	}
	if vs := full.Validate(schema.EvalResult, v); len(vs) > 0 {
		return Result{}, fmt.Errorf("%s: %s", vs[0].Pointer, vs[0].Message)
	}
	var r Result
	err := json.Unmarshal(data, &r)
	return r, err
}

// LoadResult reads and validates a meta.json.
func LoadResult(path string) (Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Result{}, err
	}
	r, err := ParseResult(data)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Encode is v as a JSON document (jsondoc.Marshal); it panics when v
// does not encode (a programming error: results are plain structs).
func Encode(v any) []byte {
	b, err := jsondoc.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// Classify maps runner-loop's exit code and the checks to an outcome and
// its reason (seed 000 §13.4 with DESIGN.md's exit codes). loopExit < 0
// means the loop did not run (setup failed: why says so).
func Classify(loopExit int, checks []CheckResult, why string) (outcome, reason string) {
	switch loopExit {
	case 0:
		failed := 0
		first := ""
		for _, c := range checks {
			if !c.Pass {
				if failed == 0 {
					first = c.Name + ": " + c.Reason
				}
				failed++
			}
		}
		if failed == 0 {
			return Success, fmt.Sprintf("complete; %s passed", vocab.Plural(len(checks), "check", "checks"))
		}
		return Fail, fmt.Sprintf("complete; %d of %s failed, first %s", failed, vocab.Plural(len(checks), "check", "checks"), first)
	case 3:
		return Stuck, "runner-loop exited 3 (stuck): " + why
	case 4:
		return Limit, "runner-loop exited 4 (limit): " + why
	case 124:
		return Timeout, "runner-loop exited 124 (iteration timeout): " + why
	case -1:
		return Error, why
	}
	return Error, fmt.Sprintf("runner-loop exited %d: %s", loopExit, why)
}
