// Package guard runs the guard ([guard] command of config.toml, `just ci`
// by default) within a deadline, its output capped into a log, and after a
// pass the test ratchet (DESIGN.md decisions 6, 21; seed 000 §5 step 10):
// for guard-run, runner-start's baseline and runner-check --guard.
package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/session"
	"github.com/treeloop/treeloop/lib/testresults"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Outcomes recorded in guard.json.
const (
	Pass        = string(vocab.GuardPass)
	Fail        = string(vocab.GuardFail)
	Timeout     = string(vocab.GuardTimeout)
	Interrupted = string(vocab.GuardInterrupted)
	Error       = string(vocab.GuardError) // the guard could not run: a runner error
)

// Guard runs the guard of cfg in env.Dir until deadline, confined when
// [sandbox] guard is set, its output capped into logPath, then the test
// ratchet after a pass (against best). It returns the record for
// guard.json and the exit code of the outcome (0 pass, 1 fail, 124, 130/143,
// 6 when the guard could not run). Shared by guard-run, the guard
// baseline of runner-start and runner-check --guard.
func Guard(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, j Judging) (rec iterdir.Guard, code int) {
	rec, code, synced := Run(in, env, cfg, deadline, logPath, j)
	return synced(rec, code)
}

// failed is the outcome of a guard that ended non-zero or by a signal,
// its exit code and message: a failure, or a runner error when it could
// not start (the runner's own probe decides, where the guard ran and as
// it ran: start.go), which its log then ends with.
func failed(in *cli.Interrupt, env *cli.Env, s Starter, res proc.Result, logPath string) (outcome string, code int, msg string) {
	if u := s.CannotStart(in, res.Status(), tail(logPath, 64<<10)); u != nil {
		msg = fmt.Sprintf("the guard cannot start (exit %d): %s", res.Status(), u.Message())
		Note(env, logPath, msg)
		return Error, exit.RunnerError, msg
	}
	if res.Signal != "" {
		return Fail, exit.Negative, fmt.Sprintf("guard failed (%s)", res.Signal)
	}
	return Fail, exit.Negative, fmt.Sprintf("guard failed (exit %d)", res.ExitCode)
}

// newRecord is guard.json's record of a guard's run that ended as res,
// its log as info, before its outcome is judged.
func newRecord(in *cli.Interrupt, cfg config.Config, res proc.Result, info proc.LogInfo) iterdir.Guard {
	rec := iterdir.Guard{
		Version: 1, Argv: cfg.Guard.Command, ExitCode: res.ExitCode, Signal: res.Signal,
		DurationMS: res.Duration.Milliseconds(), LogBytes: info.Bytes, LogTruncated: info.Truncated,
		EscapedKilled: res.Escaped,
	}
	for _, e := range res.EscapedProcs {
		c := strings.Join(strings.Fields(e.Command), " ")
		if len(c) > 60 {
			c = c[:60] + "…"
		}
		rec.Escaped = append(rec.Escaped, c)
	}
	if !res.Started.IsZero() {
		rec.StartedAt = res.Started.UTC().Format(time.RFC3339Nano)
	}
	if at := in.At(); !at.IsZero() {
		rec.InterruptedAt = at.UTC().Format(time.RFC3339Nano)
	}
	if cfg.Sandbox.ConfinesGuard() {
		rec.Sandbox = cfg.Sandbox.Mode
	}
	rec.Contained = string(session.Contained(rec.Sandbox, res))
	if res.Starts > 1 {
		rec.SandboxStarts = res.Starts
	}
	return rec
}

// Judging is what a guard's run is judged by beside its exit status.
type Judging struct {
	// Best is the run's best so far: the ratchet's count and the tests
	// that passed at the run's last pass (PASS_TO_PASS).
	Best Best
	// Results is the directory the guard writes its tests by name into
	// ($RUNNER_TEST_RESULTS), made empty before it runs; "" when [guard]
	// results is off.
	Results string
	// Caches are the guard's private build caches; nil when [guard]
	// caches is shared. CacheDigest is their digest as recorded after the
	// guard last ran ("" when none was): caches that differ are emptied
	// first. Changed lists the paths changed since the step's base (with
	// a base: guard-run) and Ignored the work tree's ignored paths (git's,
	// "dir/" for a whole directory: git.Repo.Ignored), whose build
	// outputs are removed first.
	Caches      *evidence.Caches
	CacheDigest string
	Changed     []string
	Ignored     []string
	// Submodules are the paths of the base's submodules (guard-run
	// sweeps their work trees before and after the guard's run).
	Submodules []string
	// Witness is the execute leaf whose pass needs a witness; nil when
	// none does (a baseline, runner-check, a suite-level node).
	Witness *Witness
}

// Run is Guard returning before the log's fsync, which runs meanwhile
// (proc.RunToFileSyncing): synced, called once before the log is reported
// written, waits for it and gives the record and the code Guard gives,
// the outcome an error when the log could not be synced.
func Run(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, j Judging) (rec iterdir.Guard, code int, synced func(iterdir.Guard, int) (iterdir.Guard, int)) {
	// The guard's environment is ours without the step's variables
	// (DESIGN.md decision 20). KillEscaped: guard-run is a child subreaper,
	// as agent-exec is, so what the guard leaves behind (setsid, a double
	// fork) is killed too. RUNNER_ITER_DIR tags its processes as an
	// agent's are: should guard-run itself be killed, agent-exec --restore
	// finds what the guard left running by it.
	spec := proc.Spec{Argv: cfg.Guard.Command, Dir: env.Dir, Deadline: deadline, Env: append(git.Strip(os.Environ()), "RUNNER_ITER_DIR="+filepath.Dir(logPath)), KillEscaped: true}
	// With a ratchet or tests by name, the guard's whole output (not the
	// capped log) is read for tests by name as it streams.
	var events *testresults.Stream
	if len(cfg.Guard.Ratchet) > 0 || j.Results != "" {
		events = &testresults.Stream{}
		spec.Tee = events
	}
	prepCtx, cancelPrep := context.WithDeadline(in, deadline)
	ev, writable, prepErr := prepare(prepCtx, env, cfg, &spec, j)
	cancelPrep()
	// What the guard's probes start with, should it not start.
	starter := Starter{Root: env.Dir, Config: cfg, Env: slices.Clone(spec.Env), Writable: slices.Clone(writable), Deadline: deadline}
	// [sandbox] guard: the guard runs confined like the
	// agent, without any of the agent's runner files writable.
	release, runErr := func() error { return nil }, prepErr
	if prepErr == nil {
		release, runErr = confine(env, cfg.Sandbox, filepath.Dir(logPath), ignoredFor(env, cfg, j), writable, &spec)
	}
	var res proc.Result
	var info proc.LogInfo
	logSynced := func() error { return nil }
	// The witness's base run goes beside the guard's own where it may:
	// the step waits for the longer of the two, not their sum.
	var base *witnessBase
	if runErr == nil && ev != nil && beside(cfg, j) {
		base = startWitness(in, env, cfg, deadline, logPath, j, true)
		defer base.stopBeside()
	}
	if runErr == nil {
		res, info, logSynced, runErr = proc.RunToFileSyncing(in, spec, logPath, int64(cfg.GuardOutputLimitBytes))
		if err := release(); err != nil && runErr == nil {
			runErr = err
		}
	}
	synced = func(rec iterdir.Guard, code int) (iterdir.Guard, int) {
		if err := logSynced(); err != nil {
			// As a failed write of the log: the guard's run proves
			// nothing, the ratchet's count included.
			rec.Outcome, code, rec.Ratchet = Error, exit.RunnerError, nil
			rec.Message = fmt.Sprintf("%s: %v", filepath.Base(logPath), fsutil.Cause(err))
		}
		return rec, code
	}
	rec = newRecord(in, cfg, res, info)
	var se *proc.StartError
	switch {
	case prepErr != nil:
		rec.Outcome, code = Error, exit.RunnerError
		rec.Message = fmt.Sprintf("the guard was not started: %v", fsutil.Cause(prepErr))
	case errors.As(runErr, &se):
		rec.Outcome, code = Error, exit.RunnerError
		hint := "install it, or set [guard] command in " + layout.Config
		if rec.Sandbox != "" && se.Name == cfg.Sandbox.Engine {
			hint = "runner-check says what the sandbox needs"
		}
		rec.Message = fmt.Sprintf("the guard could not start: %v (%s)", se, hint)
	case runErr != nil:
		rec.Outcome, code = Error, exit.RunnerError
		rec.Message = fmt.Sprintf("%s: %v", filepath.Base(logPath), fsutil.Cause(runErr))
	case res.Canceled:
		rec.Outcome, code = Interrupted, in.Code()
		rec.Message = "guard interrupted by " + in.Cause()
		if res.Started.IsZero() {
			rec.Message = "guard not started: interrupted by " + in.Cause() + " before it began"
		}
	case res.TimedOut:
		rec.Outcome, code = Timeout, exit.Timeout
		rec.Message = fmt.Sprintf("guard timed out: the iteration's budget ended at %s", deadline.Format(time.RFC3339))
	case res.ExitCode == 0:
		rec.Outcome, code = Pass, exit.OK
		// The test ratchet may still turn the pass into a
		// failure: fewer tests passing than the run's best.
		if len(cfg.Guard.Ratchet) > 0 {
			events.Close()
			rec.Ratchet, rec.Outcome, code, rec.Message = runRatchet(in, env, cfg, deadline, logPath, j.Best, events)
			Note(env, logPath, rec.Message)
		}
		// And so may its tests by name: failing, missing, no witness.
		if ev != nil && rec.Outcome == Pass {
			rec.Outcome, code, rec.Message = judge(in, env, cfg, deadline, logPath, j, ev, events, base)
			Note(env, logPath, rec.Message)
		}
	default:
		rec.Outcome, code, rec.Message = failed(in, env, starter, res, logPath)
		if ev != nil && rec.Outcome == Fail {
			events.Close()
			failingTests(env, ev, j.Results, logPath, events)
		}
	}
	rec.Evidence = ev
	return rec, code, synced
}
