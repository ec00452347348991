// Package policy puts back what no session of an iteration may change
// (seed 000 §9; DESIGN.md decisions 5, 11; issue 17): the branch and HEAD,
// the runner-owned files and the protected_paths globs, compared with the
// commit the step started from. agent-exec applies it after the agent,
// guard-run after the guard: a script the guard runs was written by the
// agent, so it gets the same check.
package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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
// the step stages every change once, in iter-log end. since is when the
// session started: what it created at a protected path where git ignores
// it is removed too (removeIgnoredProtected; zero: not looked for).
func Enforce(repo *git.Repo, who, branch, base string, protected []string, since time.Time) ([]string, error) {
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
		g, appendOnly := config.ProtectedGlob(e)
		if m, _ := path.Match(g, p); m && !appendOnly {
			return "protected_paths " + e, true
		}
	}
	return "", false
}

// changesUnhidden is repo.ChangesSince(base, scope...) once the marks
// that hide a protected path from it are cleared (unhideProtected). The
// marks check and the status are two git processes that only read, run
// side by side (issue 16: at 50,000 files each mostly loads the index, and
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
		if _, _, ok := ProtectedBy(p, protected); ok {
			unassume = append(unassume, p)
		}
	}
	sparse := false
	if len(skipped) > 0 {
		out, _ := repo.Run("config", "--bool", "core.sparseCheckout")
		sparse = strings.TrimSpace(string(out)) == "true"
	}
	for _, p := range skipped {
		if _, _, ok := ProtectedBy(p, protected); !ok {
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

// SealIndex is the seal's index of the run's settled iteration logs, in
// the run's iteration directory (lib/seal Index): the logs of finished
// iterations are checked by their metadata and put back from their copies
// in git's object database, so a session's seal costs the same at the
// thousandth iteration as at the first (issue 16).
const SealIndex = "seal-index"

// runLogs is the run's iteration directory (relative to the root, and
// absolute) and the seal index of its logs: every file outside iterDir is
// settled, since the runner wrote it in an earlier iteration and reads it
// as it is.
func runLogs(repo *git.Repo, runID, iterDir string) (rel, runDir, iterRel string, ix seal.Index, err error) {
	rel = path.Join(layout.Iterations, runID)
	runDir = filepath.Join(repo.Root(), filepath.FromSlash(rel))
	iterRel, err = filepath.Rel(runDir, iterDir)
	if err != nil {
		return "", "", "", seal.Index{}, err
	}
	iterRel = filepath.ToSlash(iterRel)
	ix = seal.Index{Rel: SealIndex, Store: blobStore{repo},
		Settled: func(p string) bool { return !strings.HasPrefix(p, iterRel+"/") }}
	return rel, runDir, iterRel, ix, nil
}

// sealLogs seals the run's iteration directories under repo's root; own are the
// names of the files of the iteration directory iterDir that the caller
// itself writes during the session (the agent's output.json among them).
func sealLogs(repo *git.Repo, runID, iterDir string, own ...string) (*iterLogs, error) {
	rel, runDir, iterRel, ix, err := runLogs(repo, runID, iterDir)
	if err != nil {
		return nil, err
	}
	s, err := seal.TakeIndexed(runDir, func(p string) bool {
		dir, name := path.Split(p)
		return dir == iterRel+"/" && slices.Contains(own, name)
	}, ix)
	if err != nil {
		return nil, err
	}
	return &iterLogs{rel: rel, seal: s}, nil
}

// RestoreLogs puts back the earlier iterations' logs that the seal index
// lists and that changed, from their copies, for a session that ended
// without its check (agent-exec or guard-run killed while the session ran,
// iterDir its iteration). It returns one reason per path, naming who.
func RestoreLogs(repo *git.Repo, runID, iterDir, who string) ([]string, error) {
	rel, runDir, _, ix, err := runLogs(repo, runID, iterDir)
	if err != nil {
		return nil, err
	}
	notes, err := seal.CheckIndex(runDir, ix)
	if err != nil {
		return nil, err
	}
	return (&iterLogs{rel: rel}).reasons(who, notes), nil
}

// DropSealIndex removes the run's seal index: the next seal reads every
// log and indexes them again.
func DropSealIndex(repo *git.Repo, runID string) error {
	err := os.Remove(filepath.Join(repo.Root(), filepath.FromSlash(layout.Iterations), runID, SealIndex))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// blobStore keeps the seal's copies as git blobs.
type blobStore struct{ repo *git.Repo }

func (b blobStore) Put(paths []string) ([]string, error) { return b.repo.WriteBlobs(paths) }

func (b blobStore) Get(id string) ([]byte, bool, error) { return b.repo.Blob(id) }

// Restore puts the run's iteration directories back as sealed and returns
// one reason per path, naming who ("the agent", "the guard").
func (l *iterLogs) Restore(who string) ([]string, error) {
	notes, err := l.seal.Restore()
	if err != nil {
		return nil, err
	}
	return l.reasons(who, notes), nil
}

// reasons words the seal's notes as reasons naming who.
func (l *iterLogs) reasons(who string, notes []string) []string {
	reasons := make([]string, len(notes))
	for i, n := range notes {
		reasons[i] = fmt.Sprintf("%s touched the runner's iteration log: %s/%s", who, l.rel, n)
		if seal.Restored(n) {
			reasons[i] += "; the runner put it back"
		}
	}
	return reasons
}

// gitSettings holds git's own settings across a session: the repository's config,
// info/ (attributes, exclude) and hooks (or core.hooksPath), and the
// work tree's git.SequencerState (a session may leave none of it: the
// runner's commit goes through git commit when the user has commit hooks,
// git.CommitIndexAs, and would finish a merge the session began). The runner
// commits with the user's git after the session (DESIGN.md decision 11),
// so a hook or a filter the session installed would run in the runner's
// commit, unchecked: a session may change none of them.
type gitSettings struct {
	seals []*seal.Seal
	rels  []string
}

// sealGit seals repo's config, info/ and hooks.
func sealGit(repo *git.Repo) (*gitSettings, error) {
	common, gitDir, hooks, err := gitDirs(repo)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{"config": true, "info": true, "hooks": true}
	if filepath.Clean(gitDir) == filepath.Clean(common) {
		for _, name := range git.SequencerState {
			keep[name] = true
		}
	}
	g := &gitSettings{}
	s, err := seal.Take(common, func(rel string) bool { return !keep[strings.SplitN(rel, "/", 2)[0]] })
	if err != nil {
		return nil, err
	}
	g.seals, g.rels = append(g.seals, s), append(g.rels, common)
	if filepath.Clean(gitDir) != filepath.Clean(common) {
		// A linked worktree keeps its merge state in its own git directory.
		s, err := seal.Take(gitDir, func(rel string) bool { return !slices.Contains(git.SequencerState, strings.SplitN(rel, "/", 2)[0]) })
		if err != nil {
			return nil, err
		}
		g.seals, g.rels = append(g.seals, s), append(g.rels, gitDir)
	}
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

// gitDirs asks git, in one rev-parse, for its common directory (config,
// info/), the work tree's own git directory (a linked worktree's differs)
// and its hooks directory, as absolute paths.
func gitDirs(repo *git.Repo) (common, gitDir, hooks string, err error) {
	out, err := repo.Run("rev-parse", "--path-format=absolute", "--git-common-dir", "--git-dir", "--git-path", "hooks")
	if err != nil {
		return "", "", "", err
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 3 {
		return "", "", "", fmt.Errorf("git rev-parse: %d lines for the common, the work tree's and the hooks directory", len(lines))
	}
	return lines[0], lines[1], lines[2], nil
}

// Session is everything a session (the agent's, the guard's) may not
// change, held from before it starts: git's settings, the run's iteration
// logs, and, against base, HEAD, the branch, the protected paths and the
// runner-owned files.
type Session struct {
	repo         *git.Repo
	branch, base string
	git          *gitSettings
	logs         *iterLogs
	taken        time.Time // when the seal was taken, before the session
}

// Seal takes hold before a session: repo's git settings and the run's
// iteration logs under the work tree (own: the files of iterDir the caller
// writes during the session), with the run branch and the base commit to
// check against afterwards (Check, given the protected_paths globs: the
// seal is taken while config.toml is still being read, issue 16).
func Seal(repo *git.Repo, runID, iterDir, branch, base string, own ...string) (*Session, error) {
	taken := time.Now()
	// The two seals share nothing (the logs' copies go to git's objects,
	// which the git seal leaves out): git's settings are read, one
	// rev-parse first, while the logs are (issue 16).
	type sealed struct {
		g   *gitSettings
		err error
	}
	settings := make(chan sealed, 1)
	go func() {
		g, err := sealGit(repo)
		settings <- sealed{g, err}
	}()
	l, err := sealLogs(repo, runID, iterDir, own...)
	gs := <-settings
	if gs.err != nil {
		return nil, gs.err
	}
	if err != nil {
		return nil, err
	}
	return &Session{repo: repo, branch: branch, base: base, git: gs.g, logs: l, taken: taken}, nil
}

// Digest is what the step keeps of the session's seal, out of the
// session's reach (runner-step reads it from agent-exec's and guard-run's
// --seal-fd before the session starts): "git:<sha256>,index:<sha256>", the
// digests of git's settings and of the logs' seal index ("none" when there
// is none). CheckSealed compares with it when the session ended without
// its Check.
func (s *Session) Digest() string {
	index := "none"
	if data, ok := s.logs.seal.Bytes(SealIndex); ok {
		index = sha256Hex(data)
	}
	return "git:" + s.git.digest() + ",index:" + index
}

func (g *gitSettings) digest() string {
	var parts []string
	for _, s := range g.seals {
		parts = append(parts, s.Digest())
	}
	return sha256Hex([]byte(strings.Join(parts, ",")))
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// CheckSealed compares repo's git settings and the run's seal index, as
// they are now, with digest (Session.Digest, taken before a session that
// then ended unchecked). gitOK is false when git's settings differ (the
// runner has no copy of them to put back); indexOK is false when the seal
// index differs, so it cannot be trusted to check the earlier logs. A
// digest not of Digest's shape is an error.
func CheckSealed(repo *git.Repo, runID, digest string) (gitOK, indexOK bool, err error) {
	gitWant, indexWant, ok := parseDigest(digest)
	if !ok {
		return false, false, fmt.Errorf("%q is not a seal digest (git:<sha256>,index:<sha256|none>)", digest)
	}
	g, err := sealGit(repo)
	if err != nil {
		return false, false, err
	}
	index := "none"
	if data, err := os.ReadFile(filepath.Join(repo.Root(), filepath.FromSlash(layout.Iterations), runID, SealIndex)); err == nil {
		index = sha256Hex(data)
	}
	return g.digest() == gitWant, index == indexWant, nil
}

// disjoint reports whether no path of scope (repository-relative; nil is
// the whole work tree) is dir, lies under it or holds it.
func disjoint(scope []string, dir string) bool {
	if scope == nil {
		return false
	}
	for _, p := range scope {
		if p == dir || strings.HasPrefix(dir, p+"/") || strings.HasPrefix(p, dir+"/") {
			return false
		}
	}
	return true
}

func parseDigest(d string) (gitSum, index string, ok bool) {
	g, i, found := strings.Cut(d, ",")
	gitSum, ok1 := strings.CutPrefix(g, "git:")
	index, ok2 := strings.CutPrefix(i, "index:")
	return gitSum, index, found && ok1 && ok2 && len(gitSum) == 64 && (index == "none" || len(index) == 64)
}

// Check puts back what who changed and may not have (protected: the
// protected_paths globs), returning one reason per thing put back: git's
// settings first (the other checks run git), then HEAD, the branch and the
// protected paths, then the iteration logs. The last two are checked side
// by side (issue 16) when they share no path: the protected paths' Scope
// lies outside the run's iteration directory (git is then asked about
// nothing there, and Enforce changes nothing there); the reasons keep
// their order either way.
func (s *Session) Check(who string, protected []string) ([]string, error) {
	reasons, err := s.git.Restore(who)
	if err != nil {
		return nil, fmt.Errorf("check git's settings: %w", err)
	}
	type checked struct {
		reasons []string
		err     error
	}
	logs := make(chan checked, 1)
	checkLogs := func() {
		var c checked
		c.reasons, c.err = s.logs.Restore(who)
		logs <- c
	}
	apart := disjoint(Scope(protected), s.logs.rel)
	if apart {
		go checkLogs()
	}
	more, err := Enforce(s.repo, who, s.branch, s.base, protected, s.taken)
	if !apart {
		checkLogs()
	}
	l := <-logs // waited for even on an error: nothing outlives the check
	if err != nil {
		return nil, fmt.Errorf("check the changes: %w", err)
	}
	if l.err != nil {
		return nil, fmt.Errorf("check the iteration logs: %w", l.err)
	}
	reasons = append(reasons, more...)
	return append(reasons, l.reasons...), nil
}
