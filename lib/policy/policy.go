// Package policy puts back what no session of an iteration may change
// (seed 000 §9; DESIGN.md decisions 5, 11; issue 17): the branch and HEAD,
// the runner-owned files and the protected_paths globs, compared with the
// commit the step started from. agent-exec applies it after the agent,
// guard-run after the guard: a script the guard runs was written by the
// agent, so it gets the same check.
package policy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/seal"
)

// RunnerOwned are the files only the runner changes; a session that
// touches one commits an agent error and the file is restored. tree.json is
// judged by tree-update instead; assumptions.md and questions.md are the
// agent's to append to (seed 000 §3.1).
var RunnerOwned = []string{layout.Config, layout.Schema, layout.AgentOutputSchema, layout.RunState, layout.Goal, layout.Gitignore}

// Enforce puts back what who ("the agent", "the guard") may not change and
// returns the reasons, one line each: a switched branch or moved HEAD (the
// branch ref goes back to base, the work tree keeps the files), and
// changed protected paths or runner-owned files (restored from base, or
// removed when new). branch is the run branch's short name; base the
// commit the step started from.
func Enforce(repo *git.Repo, who, branch, base string, protected []string) ([]string, error) {
	return enforce(repo, who, branch, base, protected, false)
}

// EnforceStaged is Enforce for the step's last session (the guard): the
// changed paths come from staging every change (git add -A, then the
// index against base), and the paths it puts back are put back in the
// index too, so the index holds the work tree as the step will commit it
// and iter-log end need not scan the work tree again (issue 16: one scan
// where there were two). Staging waits for the guard to end: the agent's
// changes are never staged before the guard runs.
func EnforceStaged(repo *git.Repo, who, branch, base string, protected []string) ([]string, error) {
	return enforce(repo, who, branch, base, protected, true)
}

func enforce(repo *git.Repo, who, branch, base string, protected []string, stage bool) ([]string, error) {
	var reasons []string
	current, err := repo.CurrentBranch()
	if err != nil {
		return nil, err
	}
	head, _ := repo.HeadCommit()
	if current != branch || head != base {
		switch {
		case current != branch:
			reasons = append(reasons, fmt.Sprintf("%s switched the branch from %s to %q; the runner switched back", who, branch, current))
		default:
			reasons = append(reasons, fmt.Sprintf("%s moved HEAD (%s → %s: committed or reset itself); the runner restored it, keeping the files", who, Short(base), Short(head)))
		}
		if _, err := repo.Run("symbolic-ref", "HEAD", "refs/heads/"+branch); err != nil {
			return nil, err
		}
		if _, err := repo.Run("update-ref", "refs/heads/"+branch, base); err != nil {
			return nil, err
		}
		if _, err := repo.Run("reset", "-q"); err != nil {
			return nil, err
		}
	}
	changed, err := repo.ChangedPathsSince(base)
	if stage {
		changed, err = repo.StageAllSince(base)
	}
	if err != nil {
		return nil, err
	}
	for _, p := range changed {
		glob, ok := ProtectedBy(p, protected)
		if !ok {
			continue
		}
		reasons = append(reasons, fmt.Sprintf("%s changed the protected path %s (%s); the runner restored it", who, p, glob))
		if _, found, err := repo.ShowFile(base, p); err != nil {
			return nil, err
		} else if found {
			if _, err := repo.Run("checkout", base, "--", p); err != nil {
				return nil, err
			}
		} else {
			full := filepath.Join(repo.Root(), filepath.FromSlash(p))
			if _, err := repo.Run("rm", "-q", "--cached", "--ignore-unmatch", "--", p); err != nil {
				return nil, err
			}
			if err := os.RemoveAll(full); err != nil {
				return nil, err
			}
		}
	}
	return reasons, nil
}

// ProtectedBy reports the rule protecting p: a runner-owned file, or a
// protected_paths glob matching p or one of its parent directories.
func ProtectedBy(p string, globs []string) (string, bool) {
	if slices.Contains(RunnerOwned, p) {
		return "runner-owned", true
	}
	for _, g := range globs {
		for q := p; q != "." && q != "/" && q != ""; q = path.Dir(q) {
			if ok, _ := path.Match(g, q); ok {
				return "protected_paths " + g, true
			}
		}
	}
	return "", false
}

// Short is a commit id cut to 12 characters, "(none)" when empty.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	if sha == "" {
		return "(none)"
	}
	return sha
}

// Logs holds the run's iteration directories (.runner/iterations/<run>/,
// outside git) across a session: what the runner wrote there before the
// session (begin.json, the tree snapshot, prompt.md, agent.json, earlier
// iterations' records) is what later commands read, so a session may change
// none of it.
type Logs struct {
	rel  string
	seal *seal.Seal
}

// SealLogs seals the run's iteration directories under root; own are the
// names of the files of the iteration directory iterDir that the caller
// itself writes during the session (the agent's output.json among them).
func SealLogs(root, runID, iterDir string, own ...string) (*Logs, error) {
	rel := path.Join(layout.Iterations, runID)
	runDir := filepath.Join(root, filepath.FromSlash(rel))
	iterRel, err := filepath.Rel(runDir, iterDir)
	if err != nil {
		return nil, err
	}
	iterRel = filepath.ToSlash(iterRel)
	s, err := seal.Take(runDir, func(p string) bool {
		dir, name := path.Split(p)
		return dir == iterRel+"/" && slices.Contains(own, name)
	})
	if err != nil {
		return nil, err
	}
	return &Logs{rel: rel, seal: s}, nil
}

// Restore puts the run's iteration directories back as sealed and returns
// one reason per path, naming who ("the agent", "the guard").
func (l *Logs) Restore(who string) ([]string, error) {
	notes, err := l.seal.Restore()
	if err != nil {
		return nil, err
	}
	reasons := make([]string, len(notes))
	for i, n := range notes {
		reasons[i] = fmt.Sprintf("%s touched the runner's iteration log: %s/%s; the runner put it back", who, l.rel, n)
	}
	return reasons, nil
}
