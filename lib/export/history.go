// Package export makes the branch a user proposes upstream from a run
// (DESIGN.md decision 23): the run branch keeps the audit trail (.runner/,
// every iteration), the export keeps the code: one commit per passed leaf
// that changed code, with the node's title and goal and the trailers
// Treeloop-Node, Treeloop-Guard and Treeloop-Run, and a pull-request body
// that says only what the run's records show: the tree, each pass's
// evidence by name (from the iteration logs, else the loop commits'
// trailers), the files each passed leaf changed, and the operator's
// answers and the agent's assumptions. Everything is read from git and
// written with git's plumbing (commit-tree, mktree, merge-tree,
// update-ref): no work tree or index is touched.
package export

import (
	"fmt"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/subject"
)

// Commit is one commit of a run's history, with what its subject says
// when it is an iteration commit of the run (lib/subject).
type Commit struct {
	git.LogEntry
	subject.Iteration // Iter 0: not an iteration commit of the run
}

// History is a run's first-parent history: from the commit the run
// started from to the run branch's tip.
type History struct {
	RunID  string
	Branch string // runner/<id>
	Tip    string
	// Base is the commit the run started from, the parent of its first
	// bootstrap commit (subject.Start); "" when that
	// commit is a root commit.
	Base     string
	BaseTree string   // Base's tree; "" with Base ""
	Commits  []Commit // the bootstrap commit to Tip, oldest first
}

// ReadHistory reads run runID's history from its branch runner/<id>: one
// git log. An error when the branch does not exist or has no bootstrap
// commit of the run.
func ReadHistory(repo *git.Repo, runID string) (History, error) {
	h := History{RunID: runID, Branch: layout.BranchPrefix + runID}
	ok, err := repo.BranchExists(h.Branch)
	if err != nil {
		return h, err
	}
	if !ok {
		return h, fmt.Errorf("run %s has no branch %s in this repository", runID, h.Branch)
	}
	log, err := repo.FirstParentLog("refs/heads/" + h.Branch)
	if err != nil {
		return h, err
	}
	start := -1
	for i, e := range log {
		if e.Subject == subject.Start(runID) {
			start = i
			break
		}
	}
	if start < 0 {
		return h, fmt.Errorf("%s has no commit %q: it is not the branch of run %s", h.Branch, subject.Start(runID), runID)
	}
	h.Tip = log[len(log)-1].SHA
	if start > 0 {
		h.Base, h.BaseTree = log[start-1].SHA, log[start-1].Tree
	}
	for _, e := range log[start:] {
		c := Commit{LogEntry: e}
		c.Iteration, _ = subject.ParseRunIteration(e.Subject, runID)
		h.Commits = append(h.Commits, c)
	}
	return h, nil
}

// PassedBy maps each node an iteration of h passed to that iteration's
// commit (its provenance): the iteration commit on the node whose
// subject says status=done and guard=pass, the only way a leaf passes
// (tree-update). A node passed twice (history rewritten by hand) keeps
// the later commit. Callers check the commit's tree agrees (Plan does).
func PassedBy(h History) map[string]Commit {
	m := map[string]Commit{}
	for _, c := range h.Commits {
		if c.Passed() {
			m[c.Node] = c
		}
	}
	return m
}
