package iterdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/treeloop/treeloop/lib/layout"
)

// Row is one iteration as the history shows it (iter-log list, the last
// iterations of runner-status): read from its meta.json.
type Row struct {
	Iter       int     `json:"iter"`
	NodeID     string  `json:"node_id"`
	NodePath   string  `json:"node_path"`
	Mode       string  `json:"mode"`
	Status     string  `json:"status"`
	Result     string  `json:"result"`
	Guard      string  `json:"guard"`
	AgentError bool    `json:"agent_error"`
	Class      string  `json:"class"` // the agent's failure class (agent.json), "" when the agent did not run
	Model      string  `json:"model"` // the session's model (agent.json), "" when unknown or the agent did not run
	StartedAt  string  `json:"started_at"`
	DurationMS int64   `json:"duration_ms"`
	Tokens     int64   `json:"tokens"` // input + output tokens the session reported
	CostUSD    float64 `json:"cost_usd"`
	Summary    string  `json:"summary"`
	Commit     string  `json:"commit"` // "" until committed
	// Evidence is the guard's tests by name in brief (guard.json's
	// evidence); nil when the guard did not run or reported none.
	Evidence *Cited `json:"evidence"`
}

// RowOf is m as a history row.
func RowOf(m Meta) Row {
	r := Row{
		Iter: m.Iteration, NodeID: m.NodeID, NodePath: m.NodePath, Mode: m.Mode, Status: m.Status,
		Result: m.Result, Guard: m.Guard, AgentError: m.AgentError, DurationMS: m.DurationMS,
		Summary: m.Summary, Commit: m.Commit, StartedAt: m.StartedAt.UTC().Format("2006-01-02T15:04:05Z"),
	}
	if m.GuardRun != nil {
		r.Evidence = m.GuardRun.Evidence.Cite()
	}
	if m.Agent != nil {
		r.Class, r.Model = m.Agent.Class, m.Agent.Model
		r.Tokens = m.Agent.Usage.InputTokens + m.Agent.Usage.OutputTokens
		r.CostUSD = m.Agent.Usage.CostUSD
	}
	return r
}

// Iters lists the iteration numbers under runDir (.runner/iterations/<run>),
// ascending; directories set aside by a recovery are not iterations.
func Iters(runDir string) ([]int, error) {
	entries, err := os.ReadDir(runDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || len(name) < 4 {
			continue
		}
		if n, err := strconv.Atoi(name); err == nil && n > 0 && name[0] >= '0' && name[0] <= '9' {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// History reads the rows of the last n iterations of runDir that have a
// meta.json (n <= 0: all of them), oldest first. An iteration still
// running (no meta.json yet) is left out.
func History(runDir string, n int) ([]Row, error) {
	iters, err := Iters(runDir)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for i := len(iters) - 1; i >= 0 && (n <= 0 || len(rows) < n); i-- {
		var m Meta
		err := Read(filepath.Join(runDir, layout.IterName(iters[i])), MetaFile, &m)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, RowOf(m))
	}
	slices.Reverse(rows)
	return rows, nil
}

// ShortDuration shows milliseconds as a short duration (`850ms`, `12.3s`, `3m4s`).
func ShortDuration(ms int64) string {
	switch {
	case ms < 1000:
		return strconv.FormatInt(ms, 10) + "ms"
	case ms < 60_000:
		return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
	}
	return fmt.Sprintf("%dm%ds", ms/60_000, ms/1000%60)
}
