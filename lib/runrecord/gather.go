package runrecord

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// CountNodes counts the tree's nodes: passed, stuck (open leaves whose
// attempts reached max_attempts) and open (every other node not passed).
func CountNodes(root *tree.Node) Nodes {
	var c Nodes
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		c.Total++
		switch {
		case n.Passes:
			c.Passed++
		case n.IsLeaf() && n.Attempts >= n.MaxAttempts:
			c.Stuck++
		default:
			c.Open++
		}
		for _, k := range n.Children {
			walk(k)
		}
	}
	if root != nil {
		walk(root)
	}
	return c
}

// StuckLeaves lists the tree's open leaves with no attempts left, in
// selection order (tree.Stuck); nil when there are none.
func StuckLeaves(root *tree.Node) []StuckLeaf {
	var out []StuckLeaf
	for _, e := range tree.Stuck(root) {
		n := e.Node
		out = append(out, StuckLeaf{ID: n.ID, Path: e.Path, Title: n.Title, Attempts: n.Attempts, MaxAttempts: n.MaxAttempts})
	}
	return out
}

// StuckReason is the reason a run ends stuck with: reason, and when more
// than one leaf is stuck (stuck_policy skip ends the run only once no
// other leaf is left), every one by path: "id=a path=r/a next=execute
// attempts=3/3 (2 stuck leaves: r/a, r/c)".
func StuckReason(reason string, leaves []StuckLeaf) string {
	if len(leaves) < 2 {
		return reason
	}
	paths := make([]string, len(leaves))
	for i, l := range leaves {
		paths[i] = l.Path
	}
	return fmt.Sprintf("%s (%s: %s)", reason, vocab.Plural(len(leaves), "stuck leaf", "stuck leaves"), strings.Join(paths, ", "))
}

// Repo is what a record is refreshed from: the repository's committed
// state, read once.
type Repo struct {
	Root     string // absolute repository root
	Tree     *tree.Node
	State    runstate.State
	Config   config.Config
	LastMeta *iterdir.Meta // meta.json of the last iteration iter-log end completed (next_iter - 1), nil before the first
}

// InitAdvice ends ReadRepo's error for a tree.json it cannot read: what
// to do when the repository has not been set up. A reader that knows
// better (a runner works there and rewrites the tree) leaves it out.
const InitAdvice = " (run runner-init first)"

// ReadRepo reads tree.json, run_state.json, config.toml and the last
// iteration's meta.json under root. The tree is mapped, not copied (10,000
// nodes are read in a few milliseconds).
func ReadRepo(root string) (*Repo, error) {
	rp := &Repo{Root: root}
	data, release, err := fsutil.MapFile(filepath.Join(root, layout.Tree), root, 0)
	defer release()
	if err != nil {
		return nil, fmt.Errorf("read %s: %v%s", layout.Tree, fsutil.Cause(err), InitAdvice)
	}
	t, ps := tree.Load(data)
	if len(ps) > 0 {
		return nil, fmt.Errorf("%s is invalid (%s, first: %s); run tree-validate", layout.Tree, vocab.Plural(len(ps), "error", "errors"), ps[0])
	}
	rp.Tree = t
	if rp.State, err = runstate.Load(filepath.Join(root, layout.RunState)); err != nil {
		return nil, err
	}
	if rp.Config, err = config.Load(filepath.Join(root, layout.Config), os.LookupEnv); err != nil {
		return nil, err
	}
	// The last iteration is next_iter - 1, whatever it was: run_state's
	// last_iter names the last attempt the agent is told about, which a
	// runner error or a pause leaves as it was.
	if id, it := runstate.Val(rp.State.RunID), rp.State.NextIter-1; id != "" && it > 0 {
		var m iterdir.Meta
		err := iterdir.Read(filepath.Join(root, layout.IterDir(id, it)), iterdir.MetaFile, &m)
		switch {
		case err == nil:
			rp.LastMeta = &m
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("read %s: %w", layout.IterDir(id, it)+"/"+iterdir.MetaFile, err)
		}
	}
	return rp, nil
}

// Usage is the run's usage so far: the last iteration's run_usage (the sum
// iter-log end took), else the run's usage before its next iteration.
func (rp *Repo) Usage() (Usage, error) {
	u := iterdir.Usage{}
	if rp.LastMeta != nil {
		u = rp.LastMeta.RunUsage
	} else if id := runstate.Val(rp.State.RunID); id != "" {
		var err error
		if u, err = iterdir.UsageBefore(filepath.Join(rp.Root, layout.Iterations, id), rp.State.NextIter); err != nil {
			return Usage{}, err
		}
	}
	return Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CachedTokens: u.CachedTokens, CostUSD: u.CostUSD}, nil
}

// Budgets are the run's limits from the configuration.
func (rp *Repo) Budgets() Budgets {
	return Budgets{MaxIterations: rp.Config.MaxIterations, MaxTokens: int64(rp.Config.Agent.MaxTokens), MaxCostUSD: rp.Config.Agent.MaxCostUSD}
}

// Refresh fills r's counts, usage, budgets, last iteration and HEAD from
// the repository. With count, a committed last iteration r has not seen
// counts one more iteration of the session (a session's first record is
// refreshed without count: the iteration before it belongs to an earlier
// session).
func (rp *Repo) Refresh(r *Record, count bool) error {
	r.Nodes = CountNodes(rp.Tree)
	r.StuckLeaves = StuckLeaves(rp.Tree)
	u, err := rp.Usage()
	if err != nil {
		return fmt.Errorf("sum the run's usage: %w", err)
	}
	r.Usage = u
	r.Budgets = rp.Budgets()
	if m := rp.LastMeta; m != nil && m.Commit != "" && m.RunID == r.RunID {
		if count && (r.LastIteration == nil || r.LastIteration.Iter != m.Iteration) {
			r.Iterations++
		}
		r.LastIteration = &LastIter{Iter: m.Iteration, NodeID: m.NodeID, Status: m.Status, Guard: m.Guard, Result: m.Result}
	}
	if repo, err := git.Open(rp.Root); err == nil {
		// After the iteration's commit HEAD is the commit its meta.json
		// records, which the branch's ref file confirms without a git
		// process (the step's HEAD is stale by then).
		if m := rp.LastMeta; m != nil && repo.HeadIs(m.Commit) {
			head := m.Commit
			r.Head = &head
		} else if head, err := repo.HeadCommit(); err == nil {
			r.Head = &head
		}
	}
	return nil
}
