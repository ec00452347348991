package ui

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// IterSummary is one row of /api/iterations: what an iteration's meta.json
// says (begin.json and agent.json while it runs).
type IterSummary struct {
	Run            string     `json:"run"`
	Iter           int        `json:"iter"`
	NodeID         string     `json:"node_id"`
	NodePath       string     `json:"node_path"`
	Mode           string     `json:"mode"`
	Status         string     `json:"status"` // meta's status, or "running" for an iteration without meta.json
	Result         string     `json:"result"`
	Guard          string     `json:"guard"`
	AgentError     bool       `json:"agent_error"`
	AttemptsBefore int        `json:"attempts_before"`
	AttemptsAfter  int        `json:"attempts_after"`
	MaxAttempts    int        `json:"max_attempts"`
	StartedAt      time.Time  `json:"started_at"`
	EndedAt        *time.Time `json:"ended_at"`
	DurationMS     int64      `json:"duration_ms"` // 0 while running
	Tokens         Tokens     `json:"tokens"`
	CostUSD        float64    `json:"cost_usd"`
	Running        bool       `json:"running"`
	Commit         string     `json:"commit"`
	// Backend is the agent backend that ran ("" when no session ran or,
	// while it runs, before agent.json is written).
	Backend string `json:"backend"`
}

// Tokens is an iteration's reported token usage.
type Tokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Cached int64 `json:"cached"`
}

// maxRecord bounds one JSON record read from an iteration directory.
const maxRecord = 4 << 20

// iterCache keeps the summary of every iteration whose meta.json has been
// read, keyed by run/iter and revalidated by meta.json's size and mtime,
// so listing 1,000 iterations costs a directory read and a stat each.
type iterCache struct {
	mu sync.Mutex
	m  map[string]cachedIter
}

type cachedIter struct {
	size  int64
	mtime time.Time
	sum   IterSummary
}

func newIterCache() *iterCache { return &iterCache{m: map[string]cachedIter{}} }

// list returns every iteration under .runner/iterations (run filter when
// not empty), oldest first; directories set aside by a recovery (names
// that are not numbers) and directories without begin.json are left out.
func (c *iterCache) list(root *os.Root, run string) ([]IterSummary, error) {
	runs, err := readDirNames(root, "iterations")
	if err != nil {
		return nil, err
	}
	out := []IterSummary{}
	seen := map[string]bool{}
	for _, r := range runs {
		if !idPattern.MatchString(r) || (run != "" && r != run) {
			continue
		}
		iters, err := readDirNames(root, path.Join("iterations", r))
		if err != nil {
			continue
		}
		// The run's last begun iteration, when it has no meta.json yet, is
		// the running one.
		first := len(out)
		for _, it := range iters {
			n, ok := iterNumber(it)
			if !ok {
				continue
			}
			key := r + "/" + it
			seen[key] = true
			if sum, ok := c.get(root, r, it, n); ok {
				out = append(out, sum)
			}
		}
		mine := out[first:]
		slices.SortFunc(mine, func(a, b IterSummary) int { return a.Iter - b.Iter })
		for i := range mine {
			if mine[i].Status == statusOpen {
				mine[i].Status = "unfinished"
				if i == len(mine)-1 {
					mine[i].Status, mine[i].Running = "running", true
				}
			}
		}
	}
	c.mu.Lock()
	for k := range c.m {
		if !seen[k] && (run == "" || path.Dir(k) == run) {
			delete(c.m, k)
		}
	}
	c.mu.Unlock()
	slices.SortStableFunc(out, func(a, b IterSummary) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		if a.Run != b.Run {
			if a.Run < b.Run {
				return -1
			}
			return 1
		}
		return a.Iter - b.Iter
	})
	return out, nil
}

// one is iteration n of run as list gives it, alone (none without
// begin.json or meta.json), at the cost of that iteration whatever the
// run's length: one without meta.json is running when no later iteration
// of its run has begun (the next two probed, as the tail does,
// lib/iterdir), else unfinished.
func (c *iterCache) one(root *os.Root, run string, n int) []IterSummary {
	sum, ok := c.get(root, run, layout.IterName(n), n)
	if !ok {
		return []IterSummary{}
	}
	if sum.Status == statusOpen {
		sum.Status = "unfinished"
		if !begun(root, run, n+1) && !begun(root, run, n+2) {
			sum.Status, sum.Running = "running", true
		}
	}
	return []IterSummary{sum}
}

// begun reports whether iteration n of run has begun (list shows it): its
// begin.json or meta.json exists.
func begun(root *os.Root, run string, n int) bool {
	dir := path.Join("iterations", run, layout.IterName(n))
	for _, f := range []string{iterdir.BeginFile, iterdir.MetaFile} {
		if _, err := root.Stat(path.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// statusOpen marks, inside list, an iteration without meta.json.
const statusOpen = "\x00open"

// get summarises one iteration directory.
func (c *iterCache) get(root *os.Root, run, name string, n int) (IterSummary, bool) {
	dir := path.Join("iterations", run, name)
	key := run + "/" + name
	if st, err := root.Stat(path.Join(dir, iterdir.MetaFile)); err == nil && st.Mode().IsRegular() {
		c.mu.Lock()
		e, ok := c.m[key]
		c.mu.Unlock()
		if ok && e.size == st.Size() && e.mtime.Equal(st.ModTime()) {
			return e.sum, true
		}
		var m iterdir.Meta
		if data, st2, err := readFile(root, path.Join(dir, iterdir.MetaFile), maxRecord); err == nil && json.Unmarshal(data, &m) == nil {
			sum := fromMeta(run, n, m)
			c.mu.Lock()
			c.m[key] = cachedIter{size: st2.Size(), mtime: st2.ModTime(), sum: sum}
			c.mu.Unlock()
			return sum, true
		}
	}
	// No (readable) meta.json: begin.json says what runs.
	var b iterdir.Begin
	data, _, err := readFile(root, path.Join(dir, iterdir.BeginFile), maxRecord)
	if err != nil || json.Unmarshal(data, &b) != nil {
		return IterSummary{}, false
	}
	sum := IterSummary{
		Run: run, Iter: n, NodeID: b.NodeID, NodePath: b.NodePath, Mode: b.Mode,
		Status: statusOpen, AttemptsBefore: b.Attempts, AttemptsAfter: b.Attempts,
		MaxAttempts: b.MaxAttempts, StartedAt: b.StartedAt,
	}
	var a iterdir.Agent
	if data, _, err := readFile(root, path.Join(dir, iterdir.AgentFile), maxRecord); err == nil && json.Unmarshal(data, &a) == nil {
		sum.Tokens = Tokens{a.Usage.InputTokens, a.Usage.OutputTokens, a.Usage.CachedTokens}
		sum.CostUSD = a.Usage.CostUSD
		sum.Backend = a.Backend
	}
	return sum, true
}

func fromMeta(run string, n int, m iterdir.Meta) IterSummary {
	sum := IterSummary{
		Run: run, Iter: n, NodeID: m.NodeID, NodePath: m.NodePath, Mode: m.Mode,
		Status: m.Status, Result: m.Result, Guard: m.Guard, AgentError: m.AgentError,
		AttemptsBefore: m.AttemptsBefore, AttemptsAfter: m.AttemptsAfter, MaxAttempts: m.MaxAttempts,
		StartedAt: m.StartedAt, DurationMS: m.DurationMS, Commit: m.Commit,
	}
	if !m.EndedAt.IsZero() {
		t := m.EndedAt
		sum.EndedAt = &t
	}
	if m.Agent != nil {
		u := m.Agent.Usage
		sum.Tokens = Tokens{u.InputTokens, u.OutputTokens, u.CachedTokens}
		sum.CostUSD = u.CostUSD
		sum.Backend = m.Agent.Backend
	}
	return sum
}

// iterNumber parses an iteration directory name.
func iterNumber(name string) (int, bool) {
	if !iterPattern.MatchString(name) {
		return 0, false
	}
	n, err := strconv.Atoi(name)
	return n, err == nil && n > 0
}

// readDirNames lists the directories in rel (under the root); a missing
// directory is empty. Symlinks are not followed into.
func readDirNames(root *os.Root, rel string) ([]string, error) {
	st, err := root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, nil
	}
	ents, err := fs.ReadDir(root.FS(), rel)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
