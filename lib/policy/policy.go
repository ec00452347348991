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
	"strings"

	"github.com/treeloop/treeloop/lib/config"
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
// commit the step started from. Git reads only the parts of the work tree
// that can hold a protected path (Scope; issue 16), and nothing is staged:
// the step stages every change once, in iter-log end.
func Enforce(repo *git.Repo, who, branch, base string, protected []string) ([]string, error) {
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
	changed, err := repo.ChangedPathsSince(base, Scope(protected)...)
	if err != nil {
		return nil, err
	}
	for _, p := range changed {
		glob, appendOnly, ok := ProtectedBy(p, protected)
		if !ok {
			continue
		}
		_, found, err := repo.ShowFile(base, p)
		if err != nil {
			return nil, err
		}
		switch {
		case appendOnly && !found:
			continue // a new file under an append-only glob: allowed (issue 15)
		case appendOnly:
			reasons = append(reasons, fmt.Sprintf("%s changed or deleted %s, which existed before and is append-only (%s); the runner restored it", who, p, glob))
		default:
			reasons = append(reasons, fmt.Sprintf("%s changed the protected path %s (%s); the runner restored it", who, p, glob))
		}
		if found {
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

// Scope is the repository-relative paths under which every path that
// ProtectedBy(p, entries) protects lies: the runner-owned files, and for
// each protected_paths glob its elements before the first one with a
// pattern character ("ci" for "ci/*.sh", the whole glob when it has none):
// a glob matches p or one of p's parents element by element, since
// path.Match's "*" never crosses a "/". It is nil, meaning the whole work
// tree, when a glob's first element is a pattern or the glob is not a
// clean relative path. So a check limited to Scope misses nothing
// ProtectedBy would report.
func Scope(entries []string) []string {
	scope := slices.Clone(RunnerOwned)
	for _, e := range entries {
		g, _ := config.ProtectedGlob(e)
		var lit []string
		for _, elem := range strings.Split(g, "/") {
			if strings.ContainsAny(elem, `*?[\`) {
				break
			}
			lit = append(lit, elem)
		}
		prefix := strings.Join(lit, "/")
		if prefix == "" || prefix != path.Clean(prefix) || path.IsAbs(prefix) || prefix == ".." || strings.HasPrefix(prefix, "../") {
			return nil
		}
		scope = append(scope, prefix)
	}
	return scope
}

// ProtectedBy reports the rule protecting p: a runner-owned file, or a
// protected_paths entry whose glob matches p or one of its parent
// directories. appendOnly is true when every matching entry is marked
// append-only (config.AppendOnlyPrefix, issue 15): a plain entry wins over
// an append-only one.
func ProtectedBy(p string, entries []string) (rule string, appendOnly, ok bool) {
	if slices.Contains(RunnerOwned, p) {
		return "runner-owned", false, true
	}
	for _, e := range entries {
		g, ao := config.ProtectedGlob(e)
		for q := p; q != "." && q != "/" && q != ""; q = path.Dir(q) {
			if m, _ := path.Match(g, q); m {
				if !ok || appendOnly && !ao {
					rule, appendOnly, ok = "protected_paths "+e, ao, true
				}
				break
			}
		}
	}
	return rule, appendOnly, ok
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

// iterLogs holds the run's iteration directories (.runner/iterations/<run>/,
// outside git) across a session: what the runner wrote there before the
// session (begin.json, the tree snapshot, prompt.md, agent.json, earlier
// iterations' records) is what later commands read, so a session may change
// none of it.
type iterLogs struct {
	rel  string
	seal *seal.Seal
}

// sealLogs seals the run's iteration directories under root; own are the
// names of the files of the iteration directory iterDir that the caller
// itself writes during the session (the agent's output.json among them).
func sealLogs(root, runID, iterDir string, own ...string) (*iterLogs, error) {
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
	return &iterLogs{rel: rel, seal: s}, nil
}

// Restore puts the run's iteration directories back as sealed and returns
// one reason per path, naming who ("the agent", "the guard").
func (l *iterLogs) Restore(who string) ([]string, error) {
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

// gitSettings holds git's own settings across a session: the repository's config,
// info/ (attributes, exclude) and hooks (or core.hooksPath). The runner
// commits with the user's git after the session (DESIGN.md decision 11),
// so a hook or a filter the session installed would run in the runner's
// commit, unchecked: a session may change none of them.
type gitSettings struct {
	seals []*seal.Seal
	rels  []string
}

// sealGit seals repo's config, info/ and hooks.
func sealGit(repo *git.Repo) (*gitSettings, error) {
	common, err := gitPath(repo, "--git-common-dir")
	if err != nil {
		return nil, err
	}
	hooks, err := gitPath(repo, "--git-path", "hooks")
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{"config": true, "info": true, "hooks": true}
	g := &gitSettings{}
	s, err := seal.Take(common, func(rel string) bool { return !keep[strings.SplitN(rel, "/", 2)[0]] })
	if err != nil {
		return nil, err
	}
	g.seals, g.rels = append(g.seals, s), append(g.rels, common)
	if rel, err := filepath.Rel(common, hooks); err != nil || strings.HasPrefix(rel, "..") {
		// core.hooksPath outside the git directory.
		if s, err = seal.Take(hooks, nil); err != nil {
			return nil, err
		}
		g.seals, g.rels = append(g.seals, s), append(g.rels, hooks)
	}
	return g, nil
}

// Restore puts git's settings back as sealed and returns one reason per
// path, naming who.
func (g *gitSettings) Restore(who string) ([]string, error) {
	var reasons []string
	for i, s := range g.seals {
		notes, err := s.Restore()
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			reasons = append(reasons, fmt.Sprintf("%s changed git's settings: %s/%s; the runner put it back", who, filepath.Base(g.rels[i]), n))
		}
	}
	return reasons, nil
}

func gitPath(repo *git.Repo, args ...string) (string, error) {
	out, err := repo.Run(append([]string{"rev-parse", "--path-format=absolute"}, args...)...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Session is everything a session (the agent's, the guard's) may not
// change, held from before it starts: git's settings, the run's iteration
// logs, and, against base, HEAD, the branch, the protected paths and the
// runner-owned files.
type Session struct {
	repo         *git.Repo
	branch, base string
	protected    []string
	git          *gitSettings
	logs         *iterLogs
}

// Seal takes hold before a session: repo's git settings and the run's
// iteration logs under the work tree (own: the files of iterDir the caller
// writes during the session), with the run branch, the base commit and the
// protected_paths globs to check against afterwards.
func Seal(repo *git.Repo, runID, iterDir, branch, base string, protected []string, own ...string) (*Session, error) {
	g, err := sealGit(repo)
	if err != nil {
		return nil, err
	}
	l, err := sealLogs(repo.Root(), runID, iterDir, own...)
	if err != nil {
		return nil, err
	}
	return &Session{repo: repo, branch: branch, base: base, protected: protected, git: g, logs: l}, nil
}

// Check puts back what who changed and may not have, returning one reason
// per thing put back: git's settings first (the other checks run git),
// then HEAD, the branch and the protected paths, then the iteration logs.
func (s *Session) Check(who string) ([]string, error) {
	reasons, err := s.git.Restore(who)
	if err != nil {
		return nil, fmt.Errorf("check git's settings: %w", err)
	}
	more, err := Enforce(s.repo, who, s.branch, s.base, s.protected)
	if err != nil {
		return nil, fmt.Errorf("check the changes: %w", err)
	}
	reasons = append(reasons, more...)
	if more, err = s.logs.Restore(who); err != nil {
		return nil, fmt.Errorf("check the iteration logs: %w", err)
	}
	return append(reasons, more...), nil
}
