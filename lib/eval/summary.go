package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
	"github.com/treeloop/treeloop/lib/vocab"
)

// SummaryVersion is the version of summary-<eval-run-id>.json
// (schemas/eval_summary.v1.schema.json).
const SummaryVersion = 1

// Summary is an eval run's summary: one cell per case × backend.
type Summary struct {
	Version     int      `json:"version"`
	EvalRunID   string   `json:"eval_run_id"`
	StartedAt   string   `json:"started_at"`
	EndedAt     string   `json:"ended_at"`
	Harness     Harness  `json:"harness"`
	Args        []string `json:"args"`          // eval-run's command line
	CaseSetHash string   `json:"case_set_hash"` // sha256 over the case files run, in id order
	Cases       []string `json:"cases"`
	Backends    []string `json:"backends"`
	Runs        int      `json:"runs"`
	Attempts    int      `json:"attempts"`    // cases × backends × runs
	Finished    int      `json:"finished"`    // attempts with a result
	Interrupted bool     `json:"interrupted"` // the eval was stopped before every attempt finished
	ReplayOf    string   `json:"replay_of"`
	Cells       []Cell   `json:"cells"`
}

// Harness identifies what ran the eval.
type Harness struct {
	Commit    string            `json:"commit"` // the treeloop checkout's HEAD, "" when unknown
	Dirty     bool              `json:"dirty"`
	GoVersion string            `json:"go_version"`
	Tools     map[string]string `json:"tools"` // tool → its --version line (git, just, agent CLIs)
}

// Cell is one case × backend: its runs' outcomes and medians.
type Cell struct {
	Case             string         `json:"case"`
	Backend          string         `json:"backend"`
	N                int            `json:"n"`
	Successes        int            `json:"successes"`
	Rate             float64        `json:"rate"`
	WilsonLow        float64        `json:"wilson_low"`
	WilsonHigh       float64        `json:"wilson_high"`
	Outcomes         map[string]int `json:"outcomes"` // every outcome, zero included
	Expect           string         `json:"expect"`
	Unexpected       int            `json:"unexpected"` // runs whose outcome is not the case's expect
	MedianIterations float64        `json:"median_iterations"`
	MedianTokens     float64        `json:"median_tokens"`
	MedianCostUSD    float64        `json:"median_cost_usd"`
	TotalCostUSD     float64        `json:"total_cost_usd"`
	MedianWallMS     float64        `json:"median_wall_ms"`
	MedianLoopMS     float64        `json:"median_loop_ms"`
	MedianHarnessMS  float64        `json:"median_harness_ms"`
	Results          []RunRef       `json:"results"`
}

// RunRef is one run of a cell, enough to pair and re-derive the medians.
type RunRef struct {
	Run        int     `json:"run"`
	Outcome    string  `json:"outcome"`
	Reason     string  `json:"reason"`
	Iterations int     `json:"iterations"`
	Tokens     int64   `json:"tokens"`
	CostUSD    float64 `json:"cost_usd"`
	WallMS     int64   `json:"wall_ms"`
	LoopMS     int64   `json:"loop_ms"`
	HarnessMS  int64   `json:"harness_ms"`
	Dir        string  `json:"dir"` // the attempt's results directory
}

// BuildCells groups results into cells, ordered by case then by the order
// of backends.
func BuildCells(results []Result, dirs []string, cases, backends []string, expect map[string]string) []Cell {
	idx := map[[2]string]*Cell{}
	var cells []*Cell
	for _, c := range cases {
		for _, b := range backends {
			cell := &Cell{Case: c, Backend: b, Expect: expect[c], Outcomes: map[string]int{}, Results: []RunRef{}}
			for _, o := range Outcomes {
				cell.Outcomes[o] = 0
			}
			idx[[2]string{c, b}] = cell
			cells = append(cells, cell)
		}
	}
	for i, r := range results {
		cell := idx[[2]string{r.Case, r.Backend}]
		if cell == nil {
			continue
		}
		cell.Results = append(cell.Results, RunRef{
			Run: r.Run, Outcome: r.Outcome, Reason: r.Reason, Iterations: r.Iterations,
			Tokens: r.Usage.Tokens(), CostUSD: r.Usage.CostUSD,
			WallMS: r.DurationMS.Total, LoopMS: r.DurationMS.Loop, HarnessMS: r.DurationMS.Harness, Dir: dirs[i],
		})
	}
	out := make([]Cell, 0, len(cells))
	for _, cell := range cells {
		sort.Slice(cell.Results, func(i, j int) bool { return cell.Results[i].Run < cell.Results[j].Run })
		var it, tok, cost, wall, loop, harness []float64
		for _, r := range cell.Results {
			cell.N++
			cell.Outcomes[r.Outcome]++
			if r.Outcome == Success {
				cell.Successes++
			}
			if cell.Expect != "" && r.Outcome != cell.Expect {
				cell.Unexpected++
			}
			it = append(it, float64(r.Iterations))
			tok = append(tok, float64(r.Tokens))
			cost = append(cost, r.CostUSD)
			cell.TotalCostUSD += r.CostUSD
			wall = append(wall, float64(r.WallMS))
			loop = append(loop, float64(r.LoopMS))
			harness = append(harness, float64(r.HarnessMS))
		}
		if cell.N > 0 {
			cell.Rate = float64(cell.Successes) / float64(cell.N)
		}
		cell.WilsonLow, cell.WilsonHigh = Wilson(cell.Successes, cell.N)
		cell.MedianIterations, cell.MedianTokens, cell.MedianCostUSD = Median(it), Median(tok), Median(cost)
		cell.MedianWallMS, cell.MedianLoopMS, cell.MedianHarnessMS = Median(wall), Median(loop), Median(harness)
		out = append(out, *cell)
	}
	return out
}

// LoadSummary reads and validates a summary JSON file.
func LoadSummary(path string) (Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Summary{}, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return Summary{}, fmt.Errorf("%s: %v", path, err)
	}
	if vs := full.Validate(schema.EvalSummary, v); len(vs) > 0 {
		return Summary{}, fmt.Errorf("%s: not an eval summary: %s: %s", path, vs[0].Pointer, vs[0].Message)
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return Summary{}, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}

// Markdown renders the summary's table: one row per case × backend.
func (s Summary) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## eval %s: %d of %s", s.EvalRunID, s.Finished, vocab.Plural(s.Attempts, "attempt", "attempts"))
	if s.Interrupted {
		b.WriteString(" (interrupted)")
	}
	b.WriteString("\n\n")
	b.WriteString("| case | backend | success | 95% CI | iterations | tokens | cost $ | wall s | harness s | fail | stuck | limit | timeout | error | expect |\n")
	b.WriteString("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, c := range s.Cells {
		exp := "-"
		if c.Expect != "" {
			exp = fmt.Sprintf("%s %d/%d", c.Expect, c.N-c.Unexpected, c.N)
		}
		fmt.Fprintf(&b, "| %s | %s | %d/%d | %s | %s | %s | %s | %s | %s | %d | %d | %d | %d | %d | %s |\n",
			c.Case, c.Backend, c.Successes, c.N, percentRange(c.WilsonLow, c.WilsonHigh),
			num(c.MedianIterations), num(c.MedianTokens), money(c.MedianCostUSD),
			secs(c.MedianWallMS), secs(c.MedianHarnessMS),
			c.Outcomes[Fail], c.Outcomes[Stuck], c.Outcomes[Limit], c.Outcomes[Timeout], c.Outcomes[Error], exp)
	}
	b.WriteString("\nMedians over the runs of each cell; harness s is the eval's own time per run beside the loop's.\n")
	return b.String()
}

func percentRange(lo, hi float64) string {
	return fmt.Sprintf("%.0f–%.0f%%", 100*lo, 100*hi)
}

func num(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.1f", f)
}

func money(f float64) string { return fmt.Sprintf("%.4f", f) }

func secs(ms float64) string { return fmt.Sprintf("%.2f", ms/1000) }
