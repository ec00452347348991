// Package policy puts back what no session of an iteration may change
// (seed 000 §9; DESIGN.md decisions 5, 11): the branch and HEAD,
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
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/pathglob"
)

// RunnerOwned are the files only the runner changes; a session that
// touches one commits an agent error and the file is restored. tree.json is
// judged by tree-update instead; assumptions.md and questions.md are the
// agent's to append to (seed 000 §3.1).
var RunnerOwned = []string{layout.Config, layout.Schema, layout.AgentOutputSchema, layout.RunState, layout.Goal, layout.Gitignore, layout.TestsPassed, layout.GuardCache}

// Enforce puts back what who ("the agent", "the guard") may not change and
// returns the reasons, one line each: a switched branch or moved HEAD (the
// branch ref goes back to base, the work tree keeps the files), and
// changed protected paths or runner-owned files (restored from base, or
// removed when new). branch is the run branch's short name; base the
// commit the step started from. Git reads only the parts of the work tree
// that can hold a protected path (Scope), and nothing is staged:
// the step stages every change once, in iter-log end. since is when the
// session started: what it created at a protected path where git ignores
// it is removed too (removeIgnoredProtected; zero: not looked for). held
// is the tracked protected files' raw bytes from before the session
// (Hold; nil after a session that ended unchecked): those are compared and
// put back byte for byte, and git's view of them is not asked.
func Enforce(repo *git.Repo, who, branch, base string, protected []string, since time.Time, held *Held) ([]string, error) {
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
	if held != nil {
		more, err := held.restore(repo, who, base, protected)
		if err != nil {
			return nil, err
		}
		reasons = append(reasons, more...)
	}
	changed, ignored, err := changesUnhidden(repo, base, Scope(protected), protected)
	if err != nil {
		return nil, err
	}
	more, err := removeIgnoredProtected(repo, who, ignored, protected, since)
	if err != nil {
		return nil, err
	}
	reasons = append(reasons, more...)
	for _, p := range changed {
		if held != nil && held.Has(p) {
			continue
		}
		glob, appendOnly, ok := ProtectedBy(p, protected)
		if !ok {
			more, err := enforceKeys(repo, who, base, p, KeysOf(p, protected))
			if err != nil {
				return nil, err
			}
			reasons = append(reasons, more...)
			continue
		}
		_, found, err := repo.ShowFile(base, p)
		if err != nil {
			return nil, err
		}
		switch {
		case appendOnly && !found:
			continue // a new file under an append-only glob: allowed
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
// ProtectedBy(p, entries) or KeysOf(p, entries) names lies: the
// runner-owned files, and for each protected_paths glob (a key entry's
// file glob) its elements before the first one with a pattern character
// ("ci" for "ci/*.sh", the whole glob when it has none): a glob matches p
// or one of p's parents element by element, since "*" never crosses a
// "/" (lib/pathglob; "**" has a pattern character too). It is nil,
// meaning the whole work tree, when a glob's first element is a pattern
// ("**/conftest.py") or the glob is not a clean relative path. So a check
// limited to Scope misses nothing ProtectedBy would report. The
// attributes files on the way to those paths are in it too
// (AttributesProtected).
func Scope(entries []string) []string {
	scope := slices.Clone(RunnerOwned)
	for _, e := range entries {
		g, _ := config.ProtectedGlob(e)
		if file, _, ok := config.ProtectedKey(e); ok {
			g = file
		}
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
	return append(scope, attributesScope(scope)...)
}

// removeIgnoredProtected removes what the session created, among the
// ignored paths under the scope, where a protected_paths glob (not an
// append-only one) or a runner-owned file names it exactly: a file git
// ignores is in no status, so it would stay in the work tree, uncommitted,
// for every later guard that globs there (a new ci/extra.sh beside a
// protected ci/*.sh, ignored through a .gitignore the session wrote). A
// path there from before the session (its change time, which no program
// sets back, before since) is the user's and stays; so does one under a
// protected directory (a cache the guard writes there).
func removeIgnoredProtected(repo *git.Repo, who string, ignored, protected []string, since time.Time) ([]string, error) {
	if since.IsZero() {
		return nil, nil
	}
	var reasons []string
	for _, p := range ignored {
		p = strings.TrimSuffix(p, "/")
		glob, ok := protectedExactly(p, protected)
		if !ok {
			continue
		}
		full := filepath.Join(repo.Root(), filepath.FromSlash(p))
		st, err := os.Lstat(full)
		if err != nil {
			continue
		}
		if ct, ok := fsutil.ChangeTime(st); !ok || ct.Before(since.Add(-ctimeSlack)) {
			continue
		}
		if err := os.RemoveAll(full); err != nil {
			return nil, err
		}
		reasons = append(reasons, fmt.Sprintf("%s created %s at a protected path (%s), where git ignores it; the runner removed it", who, p, glob))
	}
	return reasons, nil
}

// ctimeSlack: file times come from the kernel's coarse clock, which
// lags the clock since is read from by up to a tick (at most 10 ms).
const ctimeSlack = 20 * time.Millisecond

// protectedExactly is the rule naming p itself (not a parent directory of
// it): a runner-owned file or a protected_paths glob, append-only ones
// left out (a new file there is allowed).
func protectedExactly(p string, entries []string) (rule string, ok bool) {
	if slices.Contains(RunnerOwned, p) {
		return "runner-owned", true
	}
	for _, e := range entries {
		if _, _, isKey := config.ProtectedKey(e); isKey {
			continue
		}
		g, appendOnly := config.ProtectedGlob(e)
		if pathglob.Match(g, p) && !appendOnly {
			return "protected_paths " + e, true
		}
	}
	return "", false
}

// changesUnhidden is repo.ChangesSince(base, scope...) once the marks
// that hide a protected path from it are cleared (unhideProtected). The
// marks check and the status are two git processes that only read, run
// side by side (at 50,000 files each mostly loads the index, and
// one after the other they were the check's whole cost). The status is
// the answer only when no mark was cleared: it was read with the marks
// on, so after clearing one it is read again (a rare path: only a
// session's cheat, or a user's own mark on a protected file, leads there).
func changesUnhidden(repo *git.Repo, base string, scope, protected []string) (changed, ignored []string, err error) {
	type status struct {
		changed, ignored []string
		err              error
	}
	first := make(chan status, 1)
	go func() {
		var st status
		st.changed, st.ignored, st.err = repo.ChangesSince(base, scope...)
		first <- st
	}()
	cleared, err := unhideProtected(repo, scope, protected)
	st := <-first // waited for even on an error: no git process outlives the check
	if err != nil {
		return nil, nil, err
	}
	if cleared {
		return repo.ChangesSince(base, scope...)
	}
	return st.changed, st.ignored, st.err
}

// unhideProtected clears the assume-unchanged and skip-worktree marks of
// the protected paths under scope, and reports whether it cleared any: a
// session could mark a protected file so, change it, and no git status
// would show the change (the guard would run the changed file, the step
// would never commit or restore it). A skip-worktree mark on a file
// absent from the work tree is a sparse checkout's, kept when
// core.sparseCheckout is on.
func unhideProtected(repo *git.Repo, scope, protected []string) (cleared bool, err error) {
	assumed, skipped, err := repo.HiddenPaths(scope...)
	if err != nil || len(assumed)+len(skipped) == 0 {
		return false, err
	}
	var unassume, unskip []string
	for _, p := range assumed {
		if Guarded(p, protected) {
			unassume = append(unassume, p)
		}
	}
	sparse := false
	if len(skipped) > 0 {
		out, _ := repo.Run("config", "--bool", "core.sparseCheckout")
		sparse = strings.TrimSpace(string(out)) == "true"
	}
	for _, p := range skipped {
		if !Guarded(p, protected) {
			continue
		}
		if _, err := os.Lstat(filepath.Join(repo.Root(), filepath.FromSlash(p))); sparse && err != nil {
			continue
		}
		unskip = append(unskip, p)
	}
	if len(unassume)+len(unskip) == 0 {
		return false, nil
	}
	return true, repo.Unhide(unassume, unskip)
}

// ProtectedBy reports the rule protecting p as a whole: a runner-owned
// file, or a protected_paths entry whose glob matches p or one of its
// parent directories (a key entry protects only a key: KeysOf). appendOnly is true when every matching entry is marked
// append-only (config.AppendOnlyPrefix): a plain entry wins over
// an append-only one.
func ProtectedBy(p string, entries []string) (rule string, appendOnly, ok bool) {
	if slices.Contains(RunnerOwned, p) {
		return "runner-owned", false, true
	}
	if AttributesProtected(p, entries) {
		return "git attributes of protected paths", false, true
	}
	for _, e := range entries {
		if _, _, isKey := config.ProtectedKey(e); isKey {
			continue
		}
		g, ao := config.ProtectedGlob(e)
		for q := p; q != "." && q != "/" && q != ""; q = path.Dir(q) {
			if pathglob.Match(g, q) {
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
