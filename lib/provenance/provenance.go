// Package provenance checks that every passed node of a task tree passed
// through the loop (DESIGN.md decision 16: passes becomes true only through
// a green guard). A human may rewrite a repository, a commit with
// --no-verify may set "passes": true; the runner does not believe a pass
// that the run's history does not back:
//
//   - a passed leaf is backed by a loop commit of the run, reachable from
//     HEAD, whose subject is `chore(loop): run <run> iter <n> node <id>
//     status=done guard=pass` (loop-commit writes it only after tree-update
//     judged a green guard), and, where the iteration's log is kept here
//     (.runner/iterations/<run>/<n>/meta.json, local), that log records
//     the same node, a pass and that commit; an iteration number the run
//     never reached backs nothing;
//   - a passed inner node is backed when all its children are.
//
// Audit reports each passed node's backing (the commit a pull request can
// cite) and every node without one.
package provenance

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/subject"
	"github.com/treeloop/treeloop/lib/tree"
)

// Pass is a passed node and what backs it.
type Pass struct {
	Node string `json:"node"`
	Path string `json:"path"`
	// Commit and Iteration: the loop commit that passed a leaf; empty for
	// an inner node (backed by its children).
	Commit    string `json:"commit,omitempty"`
	Iteration int    `json:"iteration,omitempty"`
	// Log: the iteration's local log agrees (false where it is not kept,
	// as in a clone).
	Log bool `json:"log"`
}

// Unbacked is a passed node the history does not back, and why.
type Unbacked struct {
	Node   string `json:"node"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Leaf is the leaf to reopen: the node itself, or for an inner node
	// the first unbacked leaf under it (reopening it reopens the node).
	Leaf string `json:"leaf"`
}

// Report is the audit of one tree against one history.
type Report struct {
	Run      string     `json:"run"`
	Head     string     `json:"head"`
	Passes   []Pass     `json:"passes"`
	Unbacked []Unbacked `json:"unbacked"`
}

// OK reports that every passed node is backed.
func (r Report) OK() bool { return len(r.Unbacked) == 0 }

// Backed reports whether node id is passed and backed.
func (r Report) Backed(id string) bool {
	for _, p := range r.Passes {
		if p.Node == id {
			return true
		}
	}
	return false
}

// Fix is what an operator runs to work an unbacked node again.
func Fix(id string) string { return "tree-edit retry " + id }

// Message is the one-line refusal for an unbacked node, naming the fix.
func (u Unbacked) Message() string {
	return fmt.Sprintf("node %s is passed without a backing loop commit (%s): it does not count as passed; reopen it with %s", u.Node, u.Reason, Fix(u.Leaf))
}

// AuditRepo audits t, the tree of the repository at dir, against HEAD's
// history, the run and its next iteration read from run_state.json,
// reading the step's cache (CacheFile) where it serves.
func AuditRepo(dir string, t *tree.Node) (Report, error) { return auditRepo(dir, t, false) }

// AuditRepoKeep is AuditRepo that also writes the cache for the next
// audit: runner-step's start alone, between sessions (tree-validate
// --audit --keep-audit).
func AuditRepoKeep(dir string, t *tree.Node) (Report, error) { return auditRepo(dir, t, true) }

func auditRepo(dir string, t *tree.Node, keep bool) (Report, error) {
	repo, err := git.Open(dir)
	if err != nil {
		return Report{}, err
	}
	head, err := repo.HeadCommit()
	if err != nil {
		return Report{}, err
	}
	rs, err := runstate.Load(filepath.Join(repo.Root(), filepath.FromSlash(layout.RunState)))
	if err != nil {
		return Report{}, err
	}
	return audit(repo, repo.Root(), runstate.Val(rs.RunID), head, rs.NextIter, t, true, keep)
}

// Reopen returns prev with every node of unbacked that next has open set
// open as well (passes false): the tree an operator's reopening of those
// nodes is judged against, as if they had never passed.
func Reopen(prev, next *tree.Node, unbacked []Unbacked) *tree.Node {
	if len(unbacked) == 0 {
		return prev
	}
	out := prev.Clone()
	in := tree.Index(out)
	for _, u := range unbacked {
		if n, _ := tree.Find(next, u.Node); n != nil && !n.Passes {
			if e, ok := in[u.Node]; ok {
				e.Node.Passes = false
			}
		}
	}
	return out
}

// Discount returns t with the unbacked nodes open (passes false): the
// tree as the runner counts it. t itself when every pass is backed.
func Discount(t *tree.Node, unbacked []Unbacked) *tree.Node {
	if len(unbacked) == 0 || t == nil {
		return t
	}
	out := t.Clone()
	in := tree.Index(out)
	for _, u := range unbacked {
		if e, ok := in[u.Node]; ok {
			e.Node.Passes = false
		}
	}
	return out
}

// Reopens reports whether next has open a node that is passed in prev.
func Reopens(prev, next *tree.Node) bool {
	in := tree.Index(next)
	var walk func(n *tree.Node) bool
	walk = func(n *tree.Node) bool {
		if e, ok := in[n.ID]; n.Passes && ok && !e.Node.Passes {
			return true
		}
		for _, c := range n.Children {
			if walk(c) {
				return true
			}
		}
		return false
	}
	return prev != nil && next != nil && walk(prev)
}

// passCommit is a loop commit that passed a node.
type passCommit struct {
	sha  string
	iter int
}

// Audit checks every passed node of t, run runID's tree in the repository
// at root, against the history reachable from head (a commit id or
// revision). nextIter is the run's next iteration number (run_state.json's
// next_iter; 0 when unknown): a pass claimed by iteration nextIter or later
// backs nothing. Errors are git's or the logs' I/O, never an unbacked node.
func Audit(repo *git.Repo, root, runID, head string, nextIter int, t *tree.Node) (Report, error) {
	return audit(repo, root, runID, head, nextIter, t, false, false)
}

// audit is Audit, through the cache when cached (head must then be a
// full commit id), writing it again when keep.
func audit(repo *git.Repo, root, runID, head string, nextIter int, t *tree.Node, cached, keep bool) (Report, error) {
	rep := Report{Run: runID, Head: head, Passes: []Pass{}, Unbacked: []Unbacked{}}
	if t == nil || !tree.AnyPassed(t) {
		return rep, nil
	}
	var commits map[string][]passCommit
	confirmed := map[string]bool{}
	var err error
	if cached {
		commits, confirmed, err = history(repo, root, runID, head)
	} else {
		commits, err = passCommits(repo, runID, head)
	}
	if err != nil {
		return rep, err
	}
	logs := filepath.Join(root, filepath.FromSlash(layout.Iterations), runID)
	// walk returns "" when n is backed, else the unbacked leaf to reopen
	// (n's own id when n is an open node).
	var walk func(n *tree.Node, path string) (string, error)
	walk = func(n *tree.Node, path string) (string, error) {
		if path == "" {
			path = n.ID
		} else {
			path += "/" + n.ID
		}
		child, leafToReopen := "", ""
		for _, c := range n.Children {
			l, err := walk(c, path)
			if err != nil {
				return "", err
			}
			if l != "" && child == "" && c.Passes {
				child, leafToReopen = c.ID, l
			}
		}
		if !n.Passes {
			return n.ID, nil
		}
		if !n.IsLeaf() {
			if child != "" {
				rep.Unbacked = append(rep.Unbacked, Unbacked{Node: n.ID, Path: path, Reason: "its child " + child + " is not backed", Leaf: leafToReopen})
				return leafToReopen, nil
			}
			rep.Passes = append(rep.Passes, Pass{Node: n.ID, Path: path, Log: true})
			return "", nil
		}
		pass, reason, err := leaf(commits[n.ID], n.ID, runID, nextIter, logs, confirmed)
		if err != nil {
			return "", err
		}
		if reason != "" {
			rep.Unbacked = append(rep.Unbacked, Unbacked{Node: n.ID, Path: path, Reason: reason, Leaf: n.ID})
			return n.ID, nil
		}
		pass.Path = path
		rep.Passes = append(rep.Passes, pass)
		return "", nil
	}
	if _, err := walk(t, ""); err != nil {
		return rep, err
	}
	if keep && objectID(head) {
		// A cache that cannot be written slows the next audit down, and
		// nothing else.
		_ = keepCache(root, runID, head, commits, confirmed)
	}
	return rep, nil
}

// leaf checks a passed leaf's pass commits (oldest first): the first that
// its log, where kept, confirms backs it; reason says why none does. A
// commit in confirmed had its log read and agree already; one whose log
// agrees now is added to it.
func leaf(cs []passCommit, id, runID string, nextIter int, logs string, confirmed map[string]bool) (Pass, string, error) {
	if len(cs) == 0 {
		return Pass{}, fmt.Sprintf("no commit of run %s passed it", runID), nil
	}
	reason := ""
	for _, c := range cs {
		if nextIter > 0 && c.iter >= nextIter {
			reason = fmt.Sprintf("commit %s claims iteration %d, which run %s never reached", short(c.sha), c.iter, runID)
			continue
		}
		if confirmed[c.sha] {
			return Pass{Node: id, Commit: c.sha, Iteration: c.iter, Log: true}, "", nil
		}
		var m iterdir.Meta
		err := iterdir.Read(filepath.Join(logs, layout.IterName(c.iter)), iterdir.MetaFile, &m)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return Pass{Node: id, Commit: c.sha, Iteration: c.iter}, "", nil
		case err != nil:
			return Pass{}, "", fmt.Errorf("read the log of iteration %d: %w", c.iter, err)
		case m.NodeID != id || m.Commit != c.sha || m.Result != "passed":
			reason = fmt.Sprintf("commit %s claims iteration %d, whose log records node %s, result %s, commit %s", short(c.sha), c.iter, m.NodeID, m.Result, short(m.Commit))
			continue
		}
		confirmed[c.sha] = true
		return Pass{Node: id, Commit: c.sha, Iteration: c.iter, Log: true}, "", nil
	}
	return Pass{}, reason, nil
}

// passCommits maps each node to the run's commits that say they passed it
// (status=done guard=pass), oldest first.
func passCommits(repo *git.Repo, runID, head string) (map[string][]passCommit, error) {
	cs, err := repo.RunCommits(head, runID, "")
	if err != nil {
		return nil, err
	}
	return passesOf(cs, runID), nil
}

// passesOf maps each node to the commits of cs (newest first, as git log
// lists them) that say they passed it, oldest first.
func passesOf(cs []git.RunCommit, runID string) map[string][]passCommit {
	m := map[string][]passCommit{}
	for i := len(cs) - 1; i >= 0; i-- {
		if it, ok := subject.ParseRunIteration(cs[i].Subject, runID); ok && it.Passed() {
			m[it.Node] = append(m[it.Node], passCommit{sha: cs[i].SHA, iter: it.Iter})
		}
	}
	return m
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	if sha == "" {
		return "none"
	}
	return sha
}
