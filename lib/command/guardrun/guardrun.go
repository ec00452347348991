// Package guardrun is the guard-run command: it runs the guard ([guard]
// command of config.toml, `just ci` by default) for an iteration within what
// is left of the iteration's shared budget (DESIGN.md decision 6), streams
// its output into <iter>/guard.log under guard_output_limit_bytes, and
// records the outcome in <iter>/guard.json (seed 000 §5 step 10).
package guardrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/stepctx"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/sandbox"
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
	Iter string `required:"" placeholder:"DIR" help:"The iteration directory (from iter-log begin): its deadline bounds the guard; guard.log and guard.json go there."`
	JSON bool   `name:"json" help:"Print guard.json's record on stdout."`
}

// Main runs guard-run and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("guard-run", "Run the guard within the iteration's remaining budget (under bwrap with [sandbox] guard = true), then the test ratchet ([guard] ratchet) after a pass; output capped into <iter>/guard.log, outcome in <iter>/guard.json. Exit 0 pass, 1 fail (or fewer tests passing than the run's best), 124 timed out, 130/143 interrupted, 6 the guard could not run.", &Options{}, args, stdin, stdout, stderr)
}

// Run runs the guard.
func (o *Options) Run(env *cli.Env) error {
	it, err := stepctx.Load(env, o.Iter)
	if err != nil {
		return err
	}
	dir, begin, cfg := it.Dir, it.Begin, it.Config
	in := cli.NotifyInterrupt()
	defer in.Stop()
	if err := in.WatchCancelFile(filepath.Join(env.Dir, layout.Cancel)); err != nil {
		env.Warnf("cannot watch %s: %v", layout.Cancel, err)
	}
	var best Best
	if len(cfg.Guard.Ratchet) > 0 {
		if best, err = RunBest(env.Dir, begin); err != nil {
			return exit.Errorf(exit.RunnerError, "test ratchet: read the run's best count from git: %v", err)
		}
	}
	rec, code := Guard(in, env, cfg, begin.Deadline, filepath.Join(dir, iterdir.GuardLog), best)
	if err := iterdir.Write(dir, iterdir.GuardFile, rec); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", iterdir.GuardFile, fsutil.Cause(err))
	}
	if o.JSON {
		out, _ := json.MarshalIndent(rec, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
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

// Guard runs the guard of cfg in env.Dir until deadline, confined when
// [sandbox] guard is set, its output capped into logPath, then the test
// ratchet after a pass (against best). It returns the record for
// guard.json and the exit code of the outcome (0 pass, 1 fail, 124, 130/143,
// 6 when the guard could not run). Shared by guard-run and the guard
// baseline of runner-start.
func Guard(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, best Best) (rec iterdir.Guard, code int) {
	spec := proc.Spec{Argv: cfg.Guard.Command, Dir: env.Dir, Deadline: deadline}
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
	if runErr == nil {
		res, info, runErr = proc.RunToFile(in, spec, logPath, int64(cfg.GuardOutputLimitBytes))
	}
	rec = iterdir.Guard{
		Version: 1, Argv: cfg.Guard.Command, ExitCode: res.ExitCode, Signal: res.Signal,
		DurationMS: res.Duration.Milliseconds(), LogBytes: info.Bytes, LogTruncated: info.Truncated,
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
			appendLog(env, logPath, rec.Message)
		}
	default:
		rec.Outcome, code = Fail, exit.Negative
		rec.Message = fmt.Sprintf("guard failed (exit %d)", res.ExitCode)
		if res.Signal != "" {
			rec.Message = fmt.Sprintf("guard failed (%s)", res.Signal)
		}
	}
	return rec, code
}
