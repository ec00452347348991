// Package setup runs a run's setup commands (seed 004 "Setup"):
// [setup] commands, in order, once before the run's first iteration and
// again in each new worktree. Their output goes to the run's setup.log
// (.runner/iterations/<run-id>/setup.log) under a cap, the outcome to
// setup.json beside it; the cancel file and SIGINT/SIGTERM are checked
// between commands (and stop a running one). A completed setup is not run
// again in the same checkout or worktree; a failed or interrupted one is.
package setup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
)

// File names in the run's iterations directory.
const (
	LogFile    = "setup.log"
	RecordFile = "setup.json"
)

// Outcomes recorded in setup.json.
const (
	Done        = "done"
	Failed      = "failed"
	Interrupted = "interrupted"
)

// Record is setup.json.
type Record struct {
	Version  int       `json:"version"`
	RunID    string    `json:"run_id"`
	Outcome  string    `json:"outcome"` // done | failed | interrupted
	Message  string    `json:"message,omitempty"`
	Commands []Command `json:"commands"` // the commands that ran, in order
}

// Command is one setup command's end.
type Command struct {
	Argv       []string `json:"argv"`
	ExitCode   int      `json:"exit_code"`
	Signal     string   `json:"signal,omitempty"`
	DurationMS int64    `json:"duration_ms"`
}

// Dir is the directory of run runID's setup files, relative to the root.
func Dir(runID string) string { return filepath.Join(layout.Iterations, runID) }

// IsDone reports whether run runID's setup completed in the repository at
// root.
func IsDone(root, runID string) bool {
	var r Record
	err := iterdir.Read(filepath.Join(root, Dir(runID)), RecordFile, &r)
	return err == nil && r.Outcome == Done
}

// Run runs cfg's setup commands for run runID in root, within the
// iteration budget (iteration_timeout_secs) for all of them. It returns
// nil when there are none or all succeeded; otherwise an error carrying
// the exit code (6 runner error for a failure, 130/143 interrupted) whose
// one-line message names the command and the log.
func Run(root, runID string, cfg config.Config) (ran int, err error) {
	cmds := cfg.Setup.Commands
	if len(cmds) == 0 {
		return 0, nil
	}
	dir := filepath.Join(root, Dir(runID))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, exit.Errorf(exit.RunnerError, "setup: create %s: %v", Dir(runID), fsutil.Cause(err))
	}
	logRel := filepath.ToSlash(filepath.Join(Dir(runID), LogFile))
	f, err := os.OpenFile(filepath.Join(dir, LogFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, exit.Errorf(exit.RunnerError, "setup: create %s: %v", logRel, fsutil.Cause(err))
	}
	defer f.Close()
	log := proc.NewCappedWriter(f, int64(cfg.GuardOutputLimitBytes))
	in := cli.NotifyInterrupt()
	defer in.Stop()
	cancel := filepath.Join(root, layout.Cancel)
	rec := Record{Version: 1, RunID: runID, Commands: []Command{}}
	deadline := time.Now().Add(cfg.IterationTimeout())
	env := append(git.Strip(os.Environ()), "RUNNER_ROOT="+root, "RUNNER_RUN_ID="+runID)
	var code int
	for i, argv := range cmds {
		name := fmt.Sprintf("setup command %d of %d (`%s`)", i+1, len(cmds), strings.Join(argv, " "))
		if _, err := os.Stat(cancel); err == nil {
			rec.Outcome, code, rec.Message = Interrupted, exit.SIGINT, fmt.Sprintf("setup stopped before %s: %s asks the run to stop (runner-cancel --clear withdraws it)", name, layout.Cancel)
			break
		}
		if in.Err() != nil {
			rec.Outcome, code, rec.Message = Interrupted, in.Code(), fmt.Sprintf("setup interrupted by %s before %s", in.Cause(), name)
			break
		}
		fmt.Fprintf(log, "$ %s\n", strings.Join(argv, " "))
		res, runErr := proc.Run(in, proc.Spec{Argv: argv, Dir: root, Env: env, Log: log, Deadline: deadline, KillEscaped: true})
		rec.Commands = append(rec.Commands, Command{Argv: argv, ExitCode: res.ExitCode, Signal: res.Signal, DurationMS: res.Duration.Milliseconds()})
		var se *proc.StartError
		switch {
		case errors.As(runErr, &se):
			rec.Outcome, code, rec.Message = Failed, exit.RunnerError, fmt.Sprintf("%s could not start: %v (fix [setup] commands in %s)", name, se, layout.Config)
		case runErr != nil:
			rec.Outcome, code, rec.Message = Failed, exit.RunnerError, fmt.Sprintf("%s: %v", name, runErr)
		case res.Canceled:
			rec.Outcome, code, rec.Message = Interrupted, in.Code(), fmt.Sprintf("%s interrupted by %s", name, in.Cause())
		case res.TimedOut:
			rec.Outcome, code, rec.Message = Failed, exit.RunnerError, fmt.Sprintf("%s timed out (setup has iteration_timeout_secs for all its commands)", name)
		case res.ExitCode != 0 || res.Signal != "":
			how := fmt.Sprintf("exit %d", res.ExitCode)
			if res.Signal != "" {
				how = res.Signal
			}
			rec.Outcome, code, rec.Message = Failed, exit.RunnerError, fmt.Sprintf("%s failed (%s): see %s", name, how, logRel)
		}
		if rec.Outcome != "" {
			break
		}
		ran++
	}
	if rec.Outcome == "" {
		rec.Outcome = Done
	}
	if err := log.Close(); err != nil && code == 0 {
		code, rec.Message = exit.RunnerError, fmt.Sprintf("setup: write %s: %v", logRel, err)
		rec.Outcome = Failed
	}
	if err := iterdir.Write(dir, RecordFile, rec); err != nil && code == 0 {
		return ran, exit.Errorf(exit.RunnerError, "setup: write %s: %v", RecordFile, fsutil.Cause(err))
	}
	if code != 0 {
		return ran, exit.Errorf(code, "%s", rec.Message)
	}
	return ran, nil
}
