// Package session is the trust boundary (DESIGN.md decision 21): for
// every agent session and every guard run it takes, before the session
// starts, what the runner will judge it by, holds it out of the session's
// reach (this process's memory, a descriptor the step reads), and after
// the session checks and puts back what the session may not change:
// git's settings, the user's own configuration, the run's iteration logs,
// HEAD and the branch, the protected paths and the runner-owned files by
// their raw bytes (lib/policy). agent-exec and guard-run run their
// session through Run, the one sequence from the seal to the checks;
// agent-exec --restore calls Kill and Restore for a session that ended
// unchecked; the session's processes are contained by lib/proc (a PID
// namespace per session).
package session

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/policy"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/sandbox"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Session is everything a session (the agent's, the guard's) may not
// change, held from before it starts: git's settings, the run's iteration
// logs, and, against base, HEAD, the branch, the protected paths and the
// runner-owned files.
type Session struct {
	repo           *git.Repo
	runID, iterDir string
	branch, base   string
	git            *gitSettings
	home           *homeSettings
	logs           *iterLogs
	held           *policy.Held // the protected files' raw bytes (Hold)
	taken          time.Time    // when the seal was taken, before the session
}

// Confinement is the sandbox a session runs in, as given to
// sandbox.Open. The zero value is a session that runs unconfined (mode
// "none", or the guard with [sandbox] guard = false).
type Confinement struct {
	Sandbox  config.Sandbox // the [sandbox] table
	Root     string         // the root the sandbox binds writable
	Writable []string       // the runner's files the session may write (absolute)
}

// Hold reads the raw bytes of the tracked protected files (protected: the
// protected_paths globs, known once config.toml is read), which Check
// compares byte for byte, and seals the run's earlier iteration logs
// unless the session, confined by c, cannot reach them (iterLogs.reach).
// Call it after Seal, before the session starts.
func (s *Session) Hold(protected []string, c Confinement) error {
	logs := make(chan error, 1)
	go func() { logs <- s.logs.reach(s.repo, s.runID, s.iterDir, c) }()
	h, err := policy.Hold(s.repo, protected)
	if lerr := <-logs; err == nil && lerr != nil {
		err = lerr
	}
	if err != nil {
		return err
	}
	s.held = h
	return nil
}

// Seal takes hold before a session: repo's git settings and the current
// iteration's logs under the work tree (own: the files of iterDir the
// caller writes during the session), with the run branch and the base
// commit to check against afterwards (Check, given the protected_paths
// globs: the seal is taken while config.toml is still being read; Hold,
// once it is read, seals the earlier iterations' logs when the session can
// reach them).
func Seal(repo *git.Repo, runID, iterDir, branch, base string, own ...string) (*Session, error) {
	taken := time.Now()
	// The two seals share nothing: git's settings are read, one
	// rev-parse first, while the current iteration's logs are.
	type sealed struct {
		g   *gitSettings
		h   *homeSettings
		err error
	}
	settings := make(chan sealed, 1)
	go func() {
		g, h, err := sealSettings(repo)
		settings <- sealed{g, h, err}
	}()
	l, err := sealLogs(repo, runID, iterDir, own...)
	gs := <-settings
	if gs.err != nil {
		return nil, gs.err
	}
	if err != nil {
		return nil, err
	}
	return &Session{repo: repo, runID: runID, iterDir: iterDir, branch: branch, base: base, git: gs.g, home: gs.h, logs: l, taken: taken}, nil
}

// sealSettings seals git's settings and the user's configuration.
func sealSettings(repo *git.Repo) (*gitSettings, *homeSettings, error) {
	g, err := sealGit(repo)
	if err != nil {
		return nil, nil, err
	}
	dirs, err := repo.Dirs()
	if err != nil {
		return nil, nil, err
	}
	h, err := sealHome(repo.Root(), dirs.Git, filepath.Join(dirs.Git, "treeloop"))
	if err != nil {
		return nil, nil, fmt.Errorf("seal the user's configuration: %w", err)
	}
	return g, h, nil
}

// settingsDigest is the digest of git's settings and the user's
// configuration together.
func settingsDigest(g *gitSettings, h *homeSettings) string {
	return sha256Hex([]byte(g.digest() + "," + h.digest()))
}

// Digest is what the step keeps of the session's seal, out of the
// session's reach (runner-step reads it from agent-exec's and guard-run's
// --seal-fd before the session starts): "git:<sha256>,index:<sha256>", the
// digests of git's settings with the user's configuration, and of the
// logs' seal index ("none" when there is none, "confined" when the
// earlier logs were out of the session's reach and not sealed). CheckSealed
// compares with it when the session ended without its Check. Call it
// after Hold.
func (s *Session) Digest() string {
	index := "none"
	if s.logs.out {
		index = indexConfined
	} else if data, ok := s.logs.index(); ok {
		index = sha256Hex(data)
	}
	return "git:" + settingsDigest(s.git, s.home) + ",index:" + index
}

// indexConfined is Digest's index for a session that could not reach the
// earlier logs.
const indexConfined = "confined"

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
// then ended unchecked). gitOK is false when git's settings or the user's
// configuration differ (the runner has no copy of them to put back); indexOK is false when the seal
// index differs, so it cannot be trusted to check the earlier logs. A
// digest not of Digest's shape is an error.
func CheckSealed(repo *git.Repo, runID, digest string) (gitOK, indexOK bool, err error) {
	gitWant, indexWant, ok := parseDigest(digest)
	if !ok {
		return false, false, fmt.Errorf("%q is not a seal digest (git:<sha256>,index:<sha256|none|confined>)", digest)
	}
	g, h, err := sealSettings(repo)
	if err != nil {
		return false, false, err
	}
	if indexWant == indexConfined {
		// The session could not reach the logs; the index is as the
		// runner left it.
		return settingsDigest(g, h) == gitWant, true, nil
	}
	index := "none"
	if data, err := os.ReadFile(filepath.Join(repo.Root(), filepath.FromSlash(layout.Iterations), runID, SealIndex)); err == nil {
		index = sha256Hex(data)
	}
	return settingsDigest(g, h) == gitWant, index == indexWant, nil
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
	return gitSum, index, found && ok1 && ok2 && len(gitSum) == 64 && (index == "none" || index == indexConfined || len(index) == 64)
}

// Check puts back what who changed and may not have (protected: the
// protected_paths globs), returning one reason per thing put back: git's
// settings first (the other checks run git), then HEAD, the branch and the
// protected paths, then the iteration logs. The last two are checked side
// by side when they share no path: the protected paths' Scope
// lies outside the run's iteration directory (git is then asked about
// nothing there, and Enforce changes nothing there); the reasons keep
// their order either way.
func (s *Session) Check(who string, protected []string) ([]string, error) {
	reasons, err := s.home.Restore(who)
	if err != nil {
		return nil, fmt.Errorf("check the user's configuration: %w", err)
	}
	more, err := s.git.Restore(who)
	if err != nil {
		return nil, fmt.Errorf("check git's settings: %w", err)
	}
	reasons = append(reasons, more...)
	// An index the session wrote is not believed (git.Repo.ResetIndex):
	// made again from base before any check reads it.
	if s.base != "" && s.git.IndexTouched() {
		if err := s.repo.ResetIndex(s.base); err != nil {
			return nil, fmt.Errorf("reset git's index the session wrote: %w", err)
		}
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
	apart := disjoint(policy.Scope(protected), s.logs.rel)
	if apart {
		go checkLogs()
	}
	more, err = policy.Enforce(s.repo, who, s.branch, s.base, protected, s.taken, s.held)
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

// Killed is what Kill ended: the session's processes still alive.
type Killed struct {
	Containers int // containers of the repository ([sandbox] mode = "docker")
	Sessions   int // inits of the iteration's sessions (each with its namespace)
	Tagged     int // processes tagged with the iteration (where no namespace held them)
}

// Kill ends what the sessions of the iteration iterDir (in the repository
// at root, under the sandbox cfg) left running when they ended without
// their check (agent-exec or guard-run killed): first the repository's
// containers (a killed engine client leaves its container running), then
// the sessions' inits, whose namespaces die with them, then the processes
// tagged with the iteration where no namespace held them. Call it before
// Restore. Errors: a container could not be removed (what to run by hand
// is in the message).
func Kill(cfg config.Sandbox, root, iterDir string) (Killed, error) {
	var k Killed
	if cfg.Mode == config.SandboxDocker {
		n, err := sandbox.RemoveLeftovers(cfg, root)
		if err != nil {
			return k, fmt.Errorf("sandbox: %w (remove the repository's containers by hand: %s ps --filter label=%s=%s)", err, cfg.Engine, sandbox.LabelRepo, sandbox.RepoLabel(root))
		}
		k.Containers = n
	}
	k.Sessions = proc.KillSessions(iterDir)
	k.Tagged = proc.KillTagged("RUNNER_ITER_DIR=" + iterDir)
	return k, nil
}

// Restore is the check of a session of the iteration iterDir that ended
// without its own (agent-exec or guard-run killed), once Kill has ended
// what it left running: it puts back the protected paths, the
// runner-owned files, HEAD and the branch (against base), and the earlier
// iterations' logs the seal index lists. digest is the session's Digest as
// the step kept it ("" when unknown). settingsOK is false when git's
// settings or the user's configuration differ from the digest (the runner
// has no copy of them to put back): the caller must not commit.
func Restore(repo *git.Repo, runID, iterDir, branch, base string, protected []string, since time.Time, digest string) (reasons []string, settingsOK bool, err error) {
	reasons, err = policy.Enforce(repo, "the agent", branch, base, protected, since, nil)
	if err != nil {
		return nil, false, err
	}
	settingsOK, indexOK := true, true
	if digest != "" {
		if settingsOK, indexOK, err = CheckSealed(repo, runID, digest); err != nil {
			return nil, false, fmt.Errorf("%s: %w", iterdir.SealedFile, err)
		}
	}
	if !indexOK {
		if err := DropSealIndex(repo, runID); err != nil {
			return nil, false, err
		}
		return append(reasons, "the seal index of the run's iteration logs changed during the session: the earlier iterations' logs could not be checked; the index is rebuilt from the files as they are"), settingsOK, nil
	}
	more, err := RestoreLogs(repo, runID, iterDir, "the agent")
	if err != nil {
		return nil, false, err
	}
	return append(reasons, more...), settingsOK, nil
}

// Contained is what held the processes of a session that ran as res
// under the sandbox mode it was confined by (agent.json's and guard.json's
// sandbox: "" when unconfined): its container, bwrap's PID namespace, the
// session init's PID namespace, or, where the kernel refused one, the
// subreaper fallback; "" when no process was started.
func Contained(mode string, res proc.Result) vocab.Containment {
	switch {
	case res.Started.IsZero():
		return ""
	case mode == config.SandboxDocker:
		return vocab.ContainedContainer
	case mode == config.SandboxBwrap:
		return vocab.ContainedBwrap
	case res.Contained:
		return vocab.ContainedPIDNamespace
	}
	return vocab.ContainedSubreaper
}
