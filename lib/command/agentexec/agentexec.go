// Package agentexec is the agent-exec command: one fresh agent session for
// an iteration's prompt pack (seed 000 §5 steps 6-7, §8; DESIGN.md
// decisions 3, 5, 6). It runs the configured backend within the
// iteration's deadline with the executor output capped into
// <iter>/executor.log, then judges the session the same way for every
// backend: the output JSON against the agent-output schema and the mode,
// protected paths (config's protected_paths and the runner's own state
// files; restored when touched), and git (HEAD moved or branch switched:
// restored). It records everything in <iter>/agent.json; tree-update reads
// the agent errors from there. With [sandbox] mode = "bwrap" the
// session runs under bubblewrap, with "docker" in a container
// (lib/sandbox); protected_paths entries may
// be append-only; [agent] fallback hands a rate-limited, unauthenticated
// or unreachable session's budget to the next backend. A session that
// reports its own failure too often in a row on a node is an agent error
// ([agent] max_reported_failures, reported.go).
package agentexec

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/agentout"
	"github.com/treeloop/treeloop/lib/artifacts"
	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/nodetools"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/session"
	"github.com/treeloop/treeloop/lib/stepctx"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Options is the command line of agent-exec.
type Options struct {
	cli.Chdir
	stepctx.Base
	stepctx.SealFD
	Iter    string `required:"" placeholder:"DIR" help:"The iteration directory: begin.json (node, mode, deadline) and prompt.md in; executor.log, output.json and agent.json out."`
	Live    string `enum:"auto,always,never" default:"auto" help:"Copy the agent's output to stderr as it runs: auto (when stderr is a terminal), always, never."`
	Restore bool   `help:"Run no agent: only put back what an agent may not change (protected paths, runner-owned files, HEAD and branch, earlier iterations' logs the seal index lists), printing each reason. For an iteration whose agent-exec or guard-run did not finish (a crash, a killed process)."`
	Sealed  string `placeholder:"DIGEST" help:"With --restore: the seal line's digest (--seal-fd) of the session that did not finish, kept in <iter>/sealed.txt for a later --restore. git's settings that differ from it fail the restore (exit 6: the runner has no copy of them); a seal index that differs is not used."`
	JSON    bool   `name:"json" help:"Print agent.json's record on stdout."`
	cli.Get
}

// Main runs agent-exec and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("agent-exec", "Run one fresh agent session for the iteration's prompt pack and judge it (output schema and mode, protected paths, git). Prints status=<s> class=<c>. Exit 0 valid output, 5 agent error (attempt consumed), 6 runner error, 8 paused (a usage limit or an outage with no fallback left: no attempt consumed; agent.json has reset_at when known; past [agent] max_reported_failures in a row on the node, a failure the session reported about itself is exit 5), 124 timed out, 130/143 interrupted.", &Options{}, args, stdin, stdout, stderr)
}

// Run runs the session.
func (o *Options) Run(env *cli.Env) error {
	err := o.run(env)
	o.SealFD.Exit(err)
	return err
}

// run is Run before its exit is told on --seal-fd.
func (o *Options) run(env *cli.Env) error {
	if o.Restore {
		return o.restoreSession(env)
	}
	x := &execution{env: env}
	defer x.close()
	defer x.waitLog()
	out, err := session.Run(env, session.Spec{
		Iter: o.Iter, Base: o.Base.Base, Tools: true, Seal: true,
		// The agent may write its output, nothing else of the runner's
		// there.
		Own: []string{iterdir.OutputFile, iterdir.ExecutorLog, iterdir.EventsLog, iterdir.AgentFile, agent.CodexSchemaFile, agent.CodexMessageFile, agent.GeminiSettingsFile},
		Who: "the agent", Session: "the agent's session", Fails: "the iteration is an agent error",
		Prepare: func(it stepctx.Iteration, repo *git.Repo) error {
			return x.prepare(it, repo, o.tee(env))
		},
		Confinement: func(stepctx.Iteration) session.Confinement {
			return confinement(x.cfg, env.Dir, x.it.Dir, x.outPath)
		},
		Tell: func(digest string) { o.Tell(env, digest) },
		// The nodes' artifacts directories, within their cap (seed 000
		// §3.4).
		Checks: func() ([]string, error) {
			over, err := artifacts.Enforce(x.repo, cmp.Or(x.it.Base, "HEAD"), int64(x.cfg.ArtifactsLimitBytes))
			if err != nil {
				return nil, exit.Errorf(exit.RunnerError, "check the artifacts: %v", err)
			}
			// After the seal's checks put back the ignore files a
			// session may not change: a repository the session made
			// inside the work tree moved away first (its files,
			// .gitattributes among them, are then the work tree's), then
			// git's attributes at any depth put back (the seal's checks
			// cover those that govern a protected path), then what the
			// session made that git ignores removed.
			made, err := x.listMade()
			if err != nil {
				return nil, exit.Errorf(exit.RunnerError, "%v", err)
			}
			back, err := x.restoreAttributes(made)
			if err != nil {
				return nil, exit.Errorf(exit.RunnerError, "check git's attributes files: %v", err)
			}
			for _, p := range back {
				over = append(over, fmt.Sprintf("the agent changed %s: %s; the runner put it back", p, git.WhyRestored(p)))
			}
			if err := x.dropMade(made.ignored); err != nil {
				return nil, exit.Errorf(exit.RunnerError, "%v", err)
			}
			return over, nil
		},
	}, x.run)
	// The same judgement for every path, timeouts and interruptions
	// included: the iteration is committed whatever happened, so a
	// touched runner file or a moved HEAD was put back first (Run).
	if err != nil {
		return err
	}
	if out.Verdict.Appeared {
		x.rec.Cancel = &out.Verdict
	}
	if err := x.record(); err != nil {
		return err
	}
	if err := x.judgeOutput(); err != nil {
		return err
	}
	code := x.exitCode(out.Verdict, out.Violations)
	x.waitLog()
	return o.report(env, x.it.Dir, x.rec, code)
}

// restoreSession is --restore: the iteration loaded as for a session,
// then no session, only restore.
func (o *Options) restoreSession(env *cli.Env) error {
	if err := git.Hermetic(env.Dir); err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	loading, err := stepctx.StartWithTools(env, o.Iter, o.Base.Base)
	if err != nil {
		return err
	}
	repo := loading.Repo
	if repo == nil {
		if repo, err = git.Open(env.Dir); err != nil {
			return exit.Wrap(exit.RunnerError, err)
		}
	}
	it, err := loading.Wait()
	if err != nil {
		return err
	}
	if _, err := agent.New(it.Config.Agent.Backend); err != nil {
		return exit.Errorf(exit.RunnerError, "%v (set [agent] backend in %s or RUNNER_AGENT)", err, layout.Config)
	}
	return o.restore(env, repo, it)
}

// run is the session itself (session.Run's fn): confined as [sandbox]
// mode says ("bwrap" or "docker"; what the sandbox left is removed before
// the session is judged), the backend's sessions, then executor.log
// closed and on its way to the disk while the session is checked, and
// the result recorded.
func (x *execution) run(in *cli.Interrupt, _ stepctx.Iteration) error {
	// The filesystem stamps a birth time from the kernel's coarse clock,
	// up to a tick behind: one made as the session began may read a little
	// earlier.
	x.start = time.Now().Add(-10 * time.Millisecond)
	// The directories the sweep after the session leaves whole, as they
	// stand now (under a sandbox the dependency directories among them
	// are read-only), and the repositories inside the work tree the
	// session may keep: those there now (unembedMade moves any other
	// away). Two listings of the same untouched work tree, a git process
	// each, read side by side.
	var err, nestedErr error
	listed := make(chan struct{})
	go func() {
		defer close(listed)
		x.nested, nestedErr = x.repo.NestedRepos()
	}()
	x.kept, err = evidence.Kept(x.repo)
	<-listed
	if err != nil {
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	if nestedErr != nil {
		return exit.Errorf(exit.RunnerError, "list the git repositories inside the work tree: %v", nestedErr)
	}
	release, err := confine(x.env, &x.req, x.cfg, x.env.Dir, x.outPath, dependencies(x.cfg, x.kept), &x.rec)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "sandbox: %v", err)
	}
	defer release()
	x.runSessions(in)
	if err := release(); err != nil {
		return exit.Errorf(exit.RunnerError, "sandbox: %v (the session may still run: agent-exec --restore removes it)", err)
	}
	// Before any git process reads the work tree (the checks): what
	// git lists nowhere, a FIFO among them (evidence.RemoveUnlisted).
	if gone := evidence.RemoveUnlisted(x.env.Dir, x.start); len(gone) > 0 {
		note := fmt.Sprintf("removed %s the agent's session made that git lists nowhere and no commit holds (an empty directory, a FIFO): %s", vocab.Plural(len(gone), "path", "paths"), firstFew(gone, 5))
		x.env.Warnf("%s", note)
		fmt.Fprintf(x.log, "\n[treeloop] %s\n", note)
	}
	if err := x.log.Close(); err != nil {
		x.env.Warnf("%s: %v", iterdir.ExecutorLog, err)
	}
	// The log reaches the disk while the session is checked, before
	// agent.json is written.
	x.syncLog()
	x.recordResult()
	return nil
}

// execution is one agent session of agent-exec, from its prepared request
// to its judged record (agent.json).
type execution struct {
	env     *cli.Env
	repo    *git.Repo
	it      stepctx.Iteration
	cfg     config.Config // it.Config with the session's model
	backend agent.Backend // the backend that ran last
	primary string        // the configured backend's name
	req     agent.Request
	rec     iterdir.Agent
	outPath string             // <iter>/output.json
	logFile *os.File           // <iter>/executor.log
	log     *proc.CappedWriter // logFile within its cap
	closers []func() error     // run by close, last first
	logSync func()             // waits for executor.log's sync (syncLog)
	in      interruption       // the session's interruption, as it ended
	began   bool               // no interruption came before the session began
	start   time.Time          // when the session began, less the clock's tick (dropMade)
	kept    []evidence.Dir     // the directories dropMade leaves whole, as they stood before the session
	nested  []git.Nested       // the git repositories inside the work tree before the session (unembedMade)
	res     agent.Result       // the last session's result
	runErr  error              // the last session's start error
	// reported is how many failures sessions reported about themselves
	// on this node in the iterations right before this one (reportedRow).
	reported int
}

// close closes the files prepare opened, the last first.
func (x *execution) close() {
	for i := len(x.closers) - 1; i >= 0; i-- {
		x.closers[i]()
	}
}

// interruption is what interrupted the session, as it stood when the
// backend's sessions ended (cli.Interrupt: the step's signals and the
// cancel file are still listened for while the session is checked).
type interruption struct {
	code  int       // cli.Interrupt.Code
	cause string    // cli.Interrupt.Cause
	at    time.Time // cli.Interrupt.At
}

// prepare chooses the session's model by mode and attempt
// (last_attempt_model, decompose_model, execute_model, else model) and
// its backend, reads the node's agent settings and the prompt, opens
// executor.log (and events.jsonl for a backend that streams events) and
// fills the request and the record's first fields. Errors carry the
// runner-error exit code.
func (x *execution) prepare(it stepctx.Iteration, repo *git.Repo, tee io.Writer) error {
	x.it, x.repo, x.cfg = it, repo, it.Config
	var modelRule string
	x.cfg.Agent.Model, modelRule = x.cfg.Agent.ModelFor(it.Begin.Mode, it.Begin.Attempts, it.Begin.MaxAttempts)
	var err error
	if x.backend, err = agent.New(x.cfg.Agent.Backend); err != nil {
		return exit.Errorf(exit.RunnerError, "%v (set [agent] backend in %s or RUNNER_AGENT)", err, layout.Config)
	}
	env, cfg, dir, begin := x.env, &x.cfg, x.it.Dir, x.it.Begin
	// The node's own agent settings (seed 000 §3.4), from the base: the
	// operator's file, which no session can change for itself.
	var tools nodetools.Tools
	var hasTools bool
	if x.it.NodeTools.Rev != "" { // read with config.toml (StartWithTools)
		tools, hasTools, err = nodetools.FromFile(x.it.NodeTools)
	} else {
		tools, hasTools, err = nodetools.Read(x.repo, cmp.Or(x.it.Base, "HEAD"), begin.NodeID)
	}
	if err != nil {
		return exit.Errorf(exit.RunnerError, "%v (fix the node's settings and commit them)", err)
	}
	var toolsEnv []string
	if hasTools {
		if cfg.Agent, toolsEnv, err = tools.Apply(cfg.Agent); err != nil {
			return exit.Errorf(exit.RunnerError, "%s: %v", layout.NodeTools(begin.NodeID), err)
		}
	}
	promptPath := filepath.Join(dir, iterdir.PromptFile)
	prompt, err := os.ReadFile(promptPath)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "read %s (run context-write first): %v", iterdir.PromptFile, fsutil.Cause(err))
	}
	x.outPath = filepath.Join(dir, iterdir.OutputFile)
	if err := os.Remove(x.outPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exit.Errorf(exit.RunnerError, "remove a stale %s: %v", iterdir.OutputFile, fsutil.Cause(err))
	}
	if x.logFile, err = os.OpenFile(filepath.Join(dir, iterdir.ExecutorLog), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
		return exit.Errorf(exit.RunnerError, "create %s: %v", iterdir.ExecutorLog, fsutil.Cause(err))
	}
	x.closers = append(x.closers, x.logFile.Close)
	x.log = proc.NewCappedWriter(x.logFile, int64(cfg.ExecutorOutputLimitBytes))

	sum := sha256.Sum256(prompt)
	x.rec = iterdir.Agent{Version: 1, Backend: x.backend.Name(), PromptSHA256: hex.EncodeToString(sum[:]), AgentErrors: []string{}, ModelRule: modelRule}
	x.reported = reportedRow(filepath.Dir(dir), begin.Iteration, begin.NodeID)
	x.req = agent.Request{
		Prompt: prompt, PromptPath: promptPath, Root: env.Dir, IterDir: dir, OutputPath: x.outPath,
		RunID: begin.RunID, Iteration: begin.Iteration, NodeID: begin.NodeID, NodePath: begin.NodePath,
		Mode: begin.Mode, Deadline: begin.Deadline, IdleTimeout: cfg.AgentIdleTimeout(),
		Config: cfg.Agent, Log: x.log, Tee: tee, ExtraEnv: toolsEnv,
	}
	if hasTools {
		x.rec.NodeTools = tools.Summary()
		fmt.Fprintf(x.log, "[treeloop] %s: %s\n", layout.NodeTools(begin.NodeID), x.rec.NodeTools)
	}
	if agent.HasLiveView(x.backend.Name()) && x.req.Tee != nil {
		x.req.Tee = agent.LiveView(x.backend.Name(), x.req.Tee)
	}
	if agent.Streams(x.backend.Name()) || slices.ContainsFunc(cfg.Agent.Fallback, agent.Streams) {
		f, err := os.OpenFile(filepath.Join(dir, iterdir.EventsLog), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return exit.Errorf(exit.RunnerError, "create %s: %v", iterdir.EventsLog, fsutil.Cause(err))
		}
		events := proc.NewCappedWriter(f, int64(cfg.ExecutorOutputLimitBytes))
		x.closers = append(x.closers, f.Close, events.Close)
		x.req.Events = events
	}
	return nil
}

// runSessions runs the session, then the backends of [agent] fallback
// and the fresh sessions of on_rate_limit = "wait" while they apply, and
// keeps what interrupted them, as it stood then.
func (x *execution) runSessions(in *cli.Interrupt) {
	env, begin := x.env, x.it.Begin
	x.began = in.Err() == nil
	x.res, x.runErr = startSession(in, x.backend, x.req)
	x.primary = x.backend.Name()
	// [agent] fallback: a rate limit, an outage or refused
	// authentication hands what is left of the iteration's budget to the
	// next backend.
	x.backend, x.res, x.runErr = fallback(env, in, x.cfg.Agent.Fallback, begin, x.backend, &x.req, x.res, x.runErr, &x.rec, x.log)
	// on_rate_limit = "wait": a fresh session once the limit resets (or
	// after a capped backoff), for as long as the iteration's budget lasts.
	for k := 0; x.runErr == nil && x.res.Class == agent.ClassRateLimit && x.cfg.Agent.OnRateLimit == config.RateLimitWait; k++ {
		wait := agent.RateLimitWait(x.res.ResetAt, k, time.Now())
		if !time.Now().Add(wait).Before(begin.Deadline) {
			break
		}
		note := fmt.Sprintf("rate limited: waiting %s before a fresh session (on_rate_limit = \"wait\")", wait.Round(time.Second))
		env.Warnf("%s", note)
		fmt.Fprintf(x.log, "\n[treeloop] %s\n", note)
		select {
		case <-time.After(wait):
		case <-in.Done():
		}
		if in.Err() != nil {
			x.res.Class, x.res.Message = agent.ClassInterrupted, "agent interrupted by "+in.Cause()+" while waiting for a rate limit"
			break
		}
		x.res, x.runErr = x.backend.Run(in, x.req)
	}
	x.in = interruption{code: in.Code(), cause: in.Cause(), at: in.At()}
}

// listing is what listMade read of the work tree after the session.
type listing struct {
	untracked, ignored []string
	// attributes are the tracked attributes files the work tree
	// changed (git.Repo.ChangedAttributes).
	attributes []string
}

// listMade moves away the .git of each repository the session made
// inside the work tree (unembedMade) and lists, after that, the untracked
// and the ignored paths (git.Repo.Ignored) and the tracked attributes
// files changed, for the checks that follow; nothing when the session
// never began.
func (x *execution) listMade() (listing, error) {
	var l listing
	if x.start.IsZero() {
		return l, nil
	}
	// The ignored paths and the tracked attributes files changed are
	// listed beside the untracked paths, a git process each; the
	// ignored paths again after them when a repository was moved away
	// (its files are then the work tree's; it held no tracked file: git
	// lists as one only a directory that has none).
	var ignoredErr, attrErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		l.attributes, attrErr = x.repo.ChangedAttributes()
	}()
	go func() {
		defer wg.Done()
		l.ignored, ignoredErr = x.repo.Ignored()
	}()
	untracked, moved, err := unembedMade(x.env, x.repo, x.it.Begin.RunID, x.it.Begin.Iteration, x.nested, x.start, x.logNote)
	wg.Wait()
	if err != nil {
		return l, err
	}
	if moved && ignoredErr == nil {
		l.ignored, ignoredErr = x.repo.Ignored()
	}
	if ignoredErr != nil {
		return l, fmt.Errorf("list the work tree's ignored files: %v", ignoredErr)
	}
	if attrErr != nil {
		return l, fmt.Errorf("check git's attributes files: %v", attrErr)
	}
	l.untracked = untracked
	return l, nil
}

// restoreAttributes puts back git's attributes files at any depth
// (git.Repo.RestoreAttributesListed, from listMade's listings; read
// afresh, git.Repo.RestoreAttributes, when the session never began).
func (x *execution) restoreAttributes(l listing) ([]string, error) {
	base := cmp.Or(x.it.Base, "HEAD")
	if x.start.IsZero() {
		return x.repo.RestoreAttributes(base)
	}
	return x.repo.RestoreAttributesListed(base, l.attributes, l.untracked, l.ignored)
}

// dropMade removes what the session made that git ignores
// (evidence.SweepMadeAmong, from listMade's listing), saying so on stderr
// (a line, the first few paths) and at the end of executor.log (every
// path): the guard runs on what the iteration commits. Nothing when the
// session never began.
func (x *execution) dropMade(ignored []string) error {
	if x.start.IsZero() {
		return nil
	}
	m, err := evidence.SweepMadeAmong(x.repo, ignored, x.start, x.kept)
	if len(m.Removed) > 0 {
		x.env.Warnf("removed %s the agent's session made that git ignores (the guard runs on what the iteration commits): %s", vocab.Plural(len(m.Removed), "path", "paths"), firstFew(m.Removed, 5))
		x.logNote("removed what the agent's session made that git ignores, before the guard: " + strings.Join(m.Removed, " "))
	}
	if len(m.Unknown) > 0 {
		note := fmt.Sprintf("cannot tell whether the agent's session made %s (its filesystem keeps no birth time): left as they are", firstFew(m.Unknown, 5))
		x.env.Warnf("%s", note)
		x.logNote(note)
	}
	if err != nil {
		return fmt.Errorf("remove what the agent's session made that git ignores: %v", err)
	}
	return nil
}

// logNote appends "[treeloop] note" to executor.log, closed by then; a
// log that cannot take it is warned about.
func (x *execution) logNote(note string) {
	f, err := os.OpenFile(filepath.Join(x.it.Dir, iterdir.ExecutorLog), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = fmt.Fprintf(f, "\n[treeloop] %s\n", note)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		x.env.Warnf("%s: %v", iterdir.ExecutorLog, err)
	}
}

// unembedMade moves away the .git of each git repository the session
// made inside the work tree (git.Repo.UnembedMade), to
// .git/treeloop/embedded/<run>/<iteration> as the step's staging keeps
// them, before the sweep and the guard: git looks into no repository but
// its own, so the files of one whose .gitignore ignores everything in it
// were in no listing. Each is said on stderr and through note. It
// returns the untracked paths once none is left to move, and whether it
// moved any.
func unembedMade(env *cli.Env, repo *git.Repo, run string, iter int, before []git.Nested, since time.Time, note func(string)) (untracked []string, moved bool, err error) {
	dirs, err := repo.Dirs()
	if err != nil {
		return nil, false, fmt.Errorf("find the git directory: %v", err)
	}
	keep := filepath.Join(dirs.Git, "treeloop", "embedded", run, layout.IterName(iter))
	gone, untracked, err := repo.UnembedMadeListing(keep, before, since)
	for _, e := range gone {
		line := fmt.Sprintf("%s/ is a git repository the session made inside the work tree: its .git is kept in %s, and its files are the work tree's", e.Path, e.Kept)
		env.Warnf("%s", line)
		note(line)
	}
	if err != nil {
		return nil, len(gone) > 0, fmt.Errorf("git repositories the session made: %v", err)
	}
	return untracked, len(gone) > 0, nil
}

// firstFew is the first n of ps, joined, with how many more.
func firstFew(ps []string, n int) string {
	if len(ps) <= n {
		return strings.Join(ps, ", ")
	}
	return strings.Join(ps[:n], ", ") + fmt.Sprintf(" and %d more", len(ps)-n)
}

// syncLog starts syncing executor.log to the disk; waitLog waits for it.
func (x *execution) syncLog() {
	logSynced := make(chan error, 1)
	go func() { logSynced <- x.logFile.Sync() }()
	x.logSync = func() {
		if logSynced == nil {
			return
		}
		if err := <-logSynced; err != nil {
			x.env.Warnf("%s: %v", iterdir.ExecutorLog, err)
		}
		logSynced = nil
	}
}

// waitLog waits for the sync syncLog started, if any (again later does
// nothing); a failure is warned about.
func (x *execution) waitLog() {
	if x.logSync != nil {
		x.logSync()
	}
}

// recordResult copies the last session's result into the record.
func (x *execution) recordResult() {
	rec, res := &x.rec, &x.res
	rec.CostFromPrices = priceUsage(res, x.cfg.Agent)
	rec.Backend = x.backend.Name()
	rec.Argv, rec.ExitCode, rec.Signal = res.Argv, res.Proc.ExitCode, res.Proc.Signal
	rec.DurationMS = res.Proc.Duration.Milliseconds()
	if !res.Proc.Started.IsZero() {
		rec.StartedAt = res.Proc.Started.UTC().Format(time.RFC3339Nano)
	}
	if at := x.in.at; !at.IsZero() {
		rec.InterruptedAt = at.UTC().Format(time.RFC3339Nano)
	}
	rec.CLIVersion, rec.Model, rec.ResetAt = res.CLIVersion, res.Model, res.ResetAt
	rec.Usage = rec.Usage.Add(res.Usage)
	rec.AutoCompaction = res.AutoCompaction
	rec.LogBytes, rec.LogTruncated = x.log.Total(), x.log.Truncated()
	rec.EscapedKilled = res.Proc.Escaped
	rec.Contained = string(session.Contained(rec.Sandbox, res.Proc))
	if res.Proc.Starts > 1 {
		rec.SandboxStarts = res.Proc.Starts
	}
	if rec.EscapedKilled > 0 {
		left, helpers := agent.SplitEscaped(x.backend.Name(), res.Proc.EscapedProcs)
		rec.Escaped, rec.CLIHelpers = agent.Commands(res.Proc.EscapedProcs, 200), len(helpers)
		if len(left) > 0 {
			x.env.Warnf("killed %s the agent left running outside its process group: %s", vocab.Plural(len(left), "process", "processes"), strings.Join(agent.Commands(left, 60), ", "))
		}
	}
	rec.Class, rec.Message = res.Class, res.Message
	if rec.Argv == nil {
		rec.Argv = []string{}
	}
	if x.runErr != nil {
		rec.Class, rec.Message = agent.ClassStartError, x.runErr.Error()
	}
}

// record records the session in the cassette when one is configured
// (after the checks: the work tree's changes as they were put back).
// Errors carry the runner-error exit code.
func (x *execution) record() error {
	if x.cfg.Agent.Cassette == "" || x.primary == "replay" {
		return nil
	}
	if err := record(x.repo, x.it.Dir, x.it.Begin, x.cfg.Agent.Cassette, x.backend.Name(), x.res, x.runErr); err != nil {
		return exit.Errorf(exit.RunnerError, "record the session in the cassette: %v", err)
	}
	return nil
}

// judgeOutput classifies a session that ended without another class by
// its output (none, invalid for the mode, or valid with its status) and
// keeps the output in output.json.
func (x *execution) judgeOutput() error {
	rec, res := &x.rec, &x.res
	if rec.Class != "" {
		return nil
	}
	if res.Output == nil {
		rec.Class, rec.Message = agent.ClassNoOutput, "no output: the agent gave no structured output"
	} else if out, err := agentout.Parse(res.Output, x.it.Begin.Mode); err != nil {
		rec.Class, rec.Message = agent.ClassInvalidOutput, err.Error()
	} else {
		rec.Class, rec.Status = agent.ClassOK, out.Status
	}
	if res.Output != nil && !fileHolds(x.outPath, res.Output) {
		if err := fsutil.WriteAtomic(x.outPath, res.Output, 0o644); err != nil {
			return exit.Errorf(exit.RunnerError, "write %s: %v", iterdir.OutputFile, fsutil.Cause(err))
		}
	}
	return nil
}

// exitCode is agent-exec's exit code for the judged session; an agent
// error's message and the violations go into the record's agent errors.
func (x *execution) exitCode(verdict cancel.Verdict, violations []string) int {
	rec, in := &x.rec, x.in
	code := exit.OK
	over := overReported(rec.Backend, rec.Class, x.reported, x.cfg.Agent.MaxReportedFailures, x.it.Begin.NodeID)
	switch {
	case rec.Class == agent.ClassInterrupted:
		if c := in.cause; c != "" && x.began {
			rec.Message = "agent interrupted by " + c
		}
		code = in.code
		if code == 0 {
			code = exit.SIGINT
		}
	case rec.Class == agent.ClassTimeout:
		code = exit.Timeout
	case over != "":
		// One failure too many that the session reported about itself
		// on this node: an attempt, whatever it reported.
		code = exit.AgentError
		rec.AgentErrors = append(rec.AgentErrors, over)
		logRun(x.env, x.it.Begin.RunID, "reported_failures", fmt.Sprintf("iteration %d: %s", x.it.Begin.Iteration, over))
	case agent.Pauses(rec.Class):
		// A usage limit or an outage, no fallback left: the run pauses
		// until the limit resets or for a backoff (runner-loop), no
		// attempt consumed.
		code = exit.Paused
	case agent.IsRunnerClass(rec.Class):
		code = exit.RunnerError
	case rec.Class != agent.ClassOK:
		code = exit.AgentError
		rec.AgentErrors = append(rec.AgentErrors, rec.Message)
	}
	if verdict.By == cancel.BySession && code == in.code && in.cause == cli.CauseCancelFile {
		code = exit.OK // not an interruption: the session stopped itself
	}
	if len(violations) > 0 {
		rec.AgentErrors = append(rec.AgentErrors, violations...)
		if code == exit.OK {
			code = exit.AgentError
			rec.Class, rec.Message = agent.ClassPolicy, violations[0]
		}
	}
	return code
}

// report writes agent.json, prints the record (--json) or its status
// line, and words the agent errors on stderr.
func (o *Options) report(env *cli.Env, dir string, rec iterdir.Agent, code int) error {
	if err := iterdir.Write(dir, iterdir.AgentFile, rec); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", iterdir.AgentFile, fsutil.Cause(err))
	}
	if o.JSON || o.Wanted() {
		if err := o.PrintJSON(env, rec); err != nil {
			return err
		}
	} else {
		status := rec.Status
		if status == "" || code != exit.OK {
			status = "none"
		}
		fmt.Fprintf(env.Stdout, "status=%s class=%s exit=%d duration_ms=%d\n", status, rec.Class, rec.ExitCode, rec.DurationMS)
	}
	if code == exit.OK && rec.Status == string(vocab.StatusDone) {
		// The guard decides (runner-step runs guard-run on it alone).
		o.Say(env, "said_done", "1")
	}
	for _, r := range rec.AgentErrors {
		env.Errorf("agent error: %s", r)
	}
	if code != exit.OK && len(rec.AgentErrors) == 0 {
		env.Errorf("%s", rec.Message)
	}
	if code == exit.OK {
		return nil
	}
	return cli.Silent(code)
}

// tee is the live view's writer.
func (o *Options) tee(env *cli.Env) io.Writer {
	switch o.Live {
	case "always":
		return env.Stderr
	case "never":
		return nil
	}
	if f, ok := env.Stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return env.Stderr
		}
	}
	return nil
}

func fileHolds(p string, data []byte) bool {
	b, err := os.ReadFile(p)
	return err == nil && string(b) == string(data)
}

// record stores the session as the backend reported it, with the work
// tree's changes since the iteration began (after enforce), in the
// cassette's directory for this iteration.
func record(repo *git.Repo, dir string, begin iterdir.Begin, cassette, backend string, res agent.Result, runErr error) error {
	cdir, err := agent.CassetteDir(repo.Root(), cassette, begin.Iteration)
	if err != nil {
		return err
	}
	patch, err := repo.WorkTreePatch(begin.HeadBefore)
	if err != nil {
		return err
	}
	s := agent.Session{
		Backend: backend, CLIVersion: res.CLIVersion, Model: res.Model, Class: res.Class, Message: res.Message,
		ResetAt: res.ResetAt, ExitCode: res.Proc.ExitCode, Usage: res.Usage,
	}
	if runErr != nil {
		s.Class, s.Message = agent.ClassStartError, runErr.Error()
	}
	return agent.Record(cdir, s, res.Output, filepath.Join(dir, iterdir.EventsLog), patch)
}

// priceUsage gives a session whose CLI reported tokens but no cost the cost
// of its tokens at the model's [agent.prices] (the configured model, else
// the one the CLI named), so max_cost_usd can stop any backend's run. It
// reports whether it did.
func priceUsage(res *agent.Result, cfg config.Agent) bool {
	u := &res.Usage
	if u.CostUSD != 0 || u.InputTokens+u.OutputTokens == 0 {
		return false
	}
	p, ok := cfg.Price(cfg.Model)
	if !ok {
		p, ok = cfg.Price(res.Model)
	}
	if ok {
		u.CostUSD = p.Cost(u.InputTokens, u.CachedTokens, u.OutputTokens)
	}
	return ok
}

// restore is --restore: what an agent may not change, put back after a
// session that ended without its check (see Options.Restore, Sealed).
func (o *Options) restore(env *cli.Env, repo *git.Repo, it stepctx.Iteration) error {
	dir, begin := it.Dir, it.Begin
	// What the session left running ends first: under docker its
	// container (which runs on without its engine's client), then its
	// init (a crash that killed agent-exec killed that too, Pdeathsig, and
	// with it the session), then, where no namespace held the session,
	// what the agent started, found by the iteration directory in its
	// environment.
	killed, err := session.Kill(it.Config.Sandbox, env.Dir, dir)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "restore: %v", err)
	}
	if killed.Containers > 0 {
		fmt.Fprintf(env.Stdout, "removed %s the interrupted session left running\n", vocab.Plural(killed.Containers, "container", "containers"))
	}
	if n := killed.Sessions + killed.Tagged; n > 0 {
		fmt.Fprintf(env.Stdout, "killed %s the interrupted agent left running\n", vocab.Plural(n, "process", "processes"))
	}
	// The digest of the unfinished session's seal: given by the step, or
	// kept from an earlier --restore of this iteration. The session's
	// processes are gone (killed above) before it is written.
	marker := filepath.Join(dir, iterdir.SealedFile)
	digest := o.Sealed
	if digest != "" {
		if err := fsutil.WriteAtomic(marker, []byte(digest+"\n"), 0o644); err != nil {
			return exit.Errorf(exit.RunnerError, "restore: keep the seal digest: %v", fsutil.Cause(err))
		}
	} else if data, err := os.ReadFile(marker); err == nil {
		digest = strings.TrimSpace(string(data))
	}
	// Before any git process reads the work tree: what git lists
	// nowhere, a FIFO among them (evidence.RemoveUnlisted).
	gone := evidence.RemoveUnlisted(env.Dir, begin.StartedAt.Add(-10*time.Millisecond))
	reasons, gitOK, err := session.Restore(repo, begin.RunID, dir, begin.Branch, it.Base, it.Config.Protected(), begin.StartedAt, digest)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "restore: %v", err)
	}
	if len(gone) > 0 {
		reasons = append(reasons, fmt.Sprintf("removed %s the unfinished session made that git lists nowhere: %s", vocab.Plural(len(gone), "path", "paths"), strings.Join(gone, ", ")))
	}
	// No judge saw which answers operators queued during the session:
	// every one that appeared since it began is dropped.
	reasons = append(reasons, session.ForgedAnswers("the unfinished session", cancel.DropAnswers(env.Abs(layout.Answers), begin.StartedAt, nil))...)
	// git's attributes, and what the unfinished sessions made that git
	// ignores (since the iteration began): the next session's guard must
	// not run on it (a session that killed its agent-exec would otherwise
	// leave its hidden module to every later guard).
	// A repository made inside the work tree first: its files,
	// .gitattributes among them, are then the work tree's.
	since := begin.StartedAt.Add(-10 * time.Millisecond)
	if _, _, err := unembedMade(env, repo, begin.RunID, begin.Iteration, nil, since, func(line string) { reasons = append(reasons, line) }); err != nil {
		return exit.Errorf(exit.RunnerError, "restore: %v", err)
	}
	back, err := repo.RestoreAttributes(cmp.Or(it.Base, "HEAD"))
	if err != nil {
		return exit.Errorf(exit.RunnerError, "restore: check git's attributes files: %v", err)
	}
	for _, p := range back {
		reasons = append(reasons, fmt.Sprintf("the unfinished session changed %s; the runner put it back", p))
	}
	m, err := evidence.SweepMade(repo, since, nil)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "restore: %v", err)
	}
	if len(m.Removed) > 0 {
		reasons = append(reasons, fmt.Sprintf("removed %s the unfinished session made that git ignores: %s", vocab.Plural(len(m.Removed), "path", "paths"), strings.Join(m.Removed, ", ")))
	}
	for _, r := range reasons {
		fmt.Fprintln(env.Stdout, r)
	}
	if !gitOK {
		return exit.Errorf(exit.RunnerError, "git's settings (config, info/, hooks) or the user's configuration (~/.gitconfig, ~/.config/go/env, …) changed during a session that did not finish, and the runner keeps no copy of them: compare them with your own and put them back (or, once checked, remove %s), then run runner-step again", env.Rel(marker))
	}
	return nil
}

// startSession runs the backend's session, unless an interruption came
// first (a signal the step forwarded, or the cancel file, before the
// session began): then no session starts (DESIGN.md decision 12).
func startSession(in *cli.Interrupt, backend agent.Backend, req agent.Request) (agent.Result, error) {
	if in.Err() != nil {
		return agent.Result{Proc: proc.Result{ExitCode: -1}, Class: agent.ClassInterrupted, Message: "agent not started: interrupted by " + in.Cause() + " before the session began"}, nil
	}
	return backend.Run(in, req)
}
