// Package guardrun is the guard-run command: it runs the guard ([guard]
// command of config.toml, `just ci` by default) for an iteration within what
// is left of the iteration's shared budget (DESIGN.md decision 6), streams
// its output into <iter>/guard.log under guard_output_limit_bytes, and
// records the outcome in <iter>/guard.json (seed 000 §5 step 10).
//
// The guard runs scripts the agent wrote, so after it the same policy as
// after the agent applies (issue 17): a protected path, a runner-owned
// file, HEAD, the branch or the run's iteration logs changed while the
// guard ran are put back, and the iteration is not a pass (outcome fail,
// the reasons appended to guard.log, which the next session's failure.md
// shows).
package guardrun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/stepctx"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/sandbox"
	"github.com/treeloop/treeloop/lib/session"
)

// Outcomes recorded in guard.json.
const (
	Pass        = "pass"
	Fail        = "fail"
	Timeout     = "timeout"
	Interrupted = "interrupted"
	Error       = "error" // the guard could not run: a runner error
)

// Options is the command line of guard-run.
type Options struct {
	cli.Chdir
	stepctx.Base
	stepctx.SealFD
	Iter string `required:"" placeholder:"DIR" help:"The iteration directory (from iter-log begin): its deadline bounds the guard; guard.log and guard.json go there."`
	JSON bool   `name:"json" help:"Print guard.json's record on stdout."`
	cli.Get
}

// Main runs guard-run and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("guard-run", "Run the guard within the iteration's remaining budget (under bwrap with [sandbox] guard = true), then the test ratchet ([guard] ratchet) after a pass; output capped into <iter>/guard.log, outcome in <iter>/guard.json. With --base, what the guard changed and may not (protected paths, runner-owned files, HEAD, git's settings, the iteration logs) is put back and the guard fails, the reasons at the end of guard.log. Exit 0 pass, 1 fail (or fewer tests passing than the run's best), 124 timed out, 130/143 interrupted, 6 the guard could not run.", &Options{}, args, stdin, stdout, stderr)
}

// Run runs the guard.
func (o *Options) Run(env *cli.Env) error {
	// The user's git config as it is now, before a session could change
	// it, for every git process of this command (runner-step's, when it
	// started this one).
	if err := git.Hermetic(env.Dir); err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	loading, err := stepctx.Start(env, o.Iter, o.Base.Base)
	if err != nil {
		return err
	}
	// The check after the guard is the step's (it knows the base): run
	// alone, guard-run only runs the guard. The seal is taken while
	// config.toml is read from the base (issue 16: both start git
	// processes); a config.toml that cannot be read wins over it.
	var sealed *session.Session
	var sealErr error
	if o.Base.Base != "" {
		sealed, sealErr = session.Seal(loading.Repo, loading.Begin.RunID, loading.Dir, loading.Begin.Branch, loading.Base, iterdir.GuardLog, iterdir.GuardFile)
	}
	it, err := loading.Wait()
	if err != nil {
		return err
	}
	dir, begin, cfg := it.Dir, it.Begin, it.Config
	if sealErr != nil {
		return exit.Errorf(exit.RunnerError, "%v", sealErr)
	}
	// Issue 17: a cancel file the guard's own processes create is void.
	judge, err := cancel.Listen(env.Dir)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "%v (is another runner working in this repository?)", err)
	}
	in := cli.NotifyInterrupt()
	defer in.Stop()
	if err := in.WatchCancelFile(filepath.Join(env.Dir, layout.Cancel)); err != nil {
		env.Warnf("cannot watch %s: %v", layout.Cancel, err)
	}
	if sealed != nil {
		o.Tell(env, sealed.Digest())
	}
	var best Best
	if len(cfg.Guard.Ratchet) > 0 {
		if best, err = RunBest(env.Dir, begin.RunID, it.Base); err != nil {
			return exit.Errorf(exit.RunnerError, "test ratchet: read the run's best count from git: %v", err)
		}
	}
	// guard.log reaches the disk while the session is checked (issue 16).
	rec, code, synced := guard(in, env, cfg, begin.Deadline, filepath.Join(dir, iterdir.GuardLog), best)
	verdict := judge.Close(in.Cause() == cli.CauseCancelFile)
	if rec.EscapedKilled > 0 {
		env.Warnf("killed %d process(es) the guard left running outside its process group", rec.EscapedKilled)
	}
	var violations []string
	if sealed != nil {
		violations, err = sealed.Check("the guard", cfg.ProtectedPaths)
	}
	rec, code = synced(rec, code)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	if verdict.By == cancel.BySession {
		violations = append(violations, fmt.Sprintf("the guard created %s with no operator's request (runner-cancel): it stops the loop, but the guard fails (an attempt consumed)", layout.Cancel))
	}
	if verdict.Appeared {
		rec.Cancel = &verdict
	}
	if len(violations) > 0 {
		if err := appendLog(filepath.Join(dir, iterdir.GuardLog), violations); err != nil {
			return exit.Errorf(exit.RunnerError, "write %s: %v", iterdir.GuardLog, fsutil.Cause(err))
		}
		// Whatever the guard's exit status: it ran against files it
		// changed, so it proves nothing. A guard that stopped itself by
		// creating the cancel file is not an interruption either. A
		// timeout or an operator's interrupt keeps its outcome.
		if rec.Outcome == Pass || rec.Outcome == Fail || rec.Outcome == Interrupted && verdict.By == cancel.BySession {
			rec.Outcome, code = Fail, exit.Negative
			rec.Message = fmt.Sprintf("guard failed: %s", strings.Join(violations, "; "))
		}
	}
	if err := iterdir.Write(dir, iterdir.GuardFile, rec); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", iterdir.GuardFile, fsutil.Cause(err))
	}
	if o.JSON || o.Wanted() {
		if err := o.PrintJSON(env, rec); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.Stdout, "guard=%s exit=%d duration_ms=%d\n", rec.Outcome, rec.ExitCode, rec.DurationMS)
	}
	if rec.Message != "" && rec.Outcome != Pass {
		env.Errorf("%s", rec.Message)
	}
	if code == 0 {
		return nil
	}
	return cli.Silent(code)
}

// appendLog adds the runner's reasons at the end of guard.log, past its
// cap: the next session's failure.md shows the log's end.
func appendLog(path string, reasons []string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\n[treeloop] the guard's run does not count:\n")
	for _, r := range reasons {
		fmt.Fprintf(&b, "[treeloop] %s\n", r)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Guard runs the guard of cfg in env.Dir until deadline, confined when
// [sandbox] guard is set, its output capped into logPath, then the test
// ratchet after a pass (against best). It returns the record for
// guard.json and the exit code of the outcome (0 pass, 1 fail, 124, 130/143,
// 6 when the guard could not run). Shared by guard-run and the guard
// baseline of runner-start.
func Guard(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, best Best) (rec iterdir.Guard, code int) {
	rec, code, synced := guard(in, env, cfg, deadline, logPath, best)
	return synced(rec, code)
}

// guard is Guard returning before the log's fsync, which runs meanwhile
// (proc.RunToFileSyncing): synced, called once before the log is reported
// written, waits for it and gives the record and the code Guard gives,
// the outcome an error when the log could not be synced.
func guard(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, best Best) (rec iterdir.Guard, code int, synced func(iterdir.Guard, int) (iterdir.Guard, int)) {
	// The guard's environment is ours without the step's variables
	// (DESIGN.md decision 20). KillEscaped: guard-run is a child subreaper,
	// as agent-exec is, so what the guard leaves behind (setsid, a double
	// fork) is killed too. RUNNER_ITER_DIR tags its processes as an
	// agent's are: should guard-run itself be killed, agent-exec --restore
	// finds what the guard left running by it.
	spec := proc.Spec{Argv: cfg.Guard.Command, Dir: env.Dir, Deadline: deadline, Env: append(git.Strip(os.Environ()), "RUNNER_ITER_DIR="+filepath.Dir(logPath)), KillEscaped: true}
	// [sandbox] guard = true (issue 15): the guard runs confined like the
	// agent, without any of the agent's runner files writable.
	sandboxed := cfg.Sandbox.Mode == config.SandboxBwrap && cfg.Sandbox.Guard
	var runErr error
	if sandboxed {
		var sb *sandbox.Sandbox
		if sb, runErr = sandbox.New(cfg.Sandbox, env.Dir, nil, nil); runErr == nil {
			spec.Argv, runErr = sb.Wrap(spec.Argv)
		}
	}
	var res proc.Result
	var info proc.LogInfo
	logSynced := func() error { return nil }
	if runErr == nil {
		res, info, logSynced, runErr = proc.RunToFileSyncing(in, spec, logPath, int64(cfg.GuardOutputLimitBytes))
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
	rec = iterdir.Guard{
		Version: 1, Argv: cfg.Guard.Command, ExitCode: res.ExitCode, Signal: res.Signal,
		DurationMS: res.Duration.Milliseconds(), LogBytes: info.Bytes, LogTruncated: info.Truncated,
		EscapedKilled: res.Escaped,
	}
	if sandboxed {
		rec.Sandbox = config.SandboxBwrap
	}
	var se *proc.StartError
	switch {
	case errors.As(runErr, &se):
		rec.Outcome, code = Error, exit.RunnerError
		rec.Message = fmt.Sprintf("the guard could not start: %v (install it, or set [guard] command in %s)", se, layout.Config)
	case runErr != nil:
		rec.Outcome, code = Error, exit.RunnerError
		rec.Message = fmt.Sprintf("%s: %v", filepath.Base(logPath), fsutil.Cause(runErr))
	case res.Canceled:
		rec.Outcome, code = Interrupted, in.Code()
		rec.Message = "guard interrupted by " + in.Cause()
	case res.TimedOut:
		rec.Outcome, code = Timeout, exit.Timeout
		rec.Message = fmt.Sprintf("guard timed out: the iteration's budget ended at %s", deadline.Format(time.RFC3339))
	case res.ExitCode == 0:
		rec.Outcome, code = Pass, exit.OK
		// The test ratchet (issue 15) may still turn the pass into a
		// failure: fewer tests passing than the run's best.
		if len(cfg.Guard.Ratchet) > 0 {
			rec.Ratchet, rec.Outcome, code, rec.Message = runRatchet(in, env, cfg, deadline, logPath, best)
			appendNote(env, logPath, rec.Message)
		}
	default:
		rec.Outcome, code = Fail, exit.Negative
		rec.Message = fmt.Sprintf("guard failed (exit %d)", res.ExitCode)
		if res.Signal != "" {
			rec.Message = fmt.Sprintf("guard failed (%s)", res.Signal)
		}
	}
	return rec, code, synced
}
