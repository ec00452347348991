package guardrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/stepctx"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/ratchet"
)

// ratchetOutputLimit caps what the ratchet command may print.
const ratchetOutputLimit = 64 << 10

// EnvGuardLog names the guard's log for the ratchet command, so it can
// count from the guard's own output instead of running the tests again.
const EnvGuardLog = "RUNNER_GUARD_LOG"

// runRatchet runs [guard] ratchet after a green guard and compares its
// count with the best recorded in the run's commits up to the iteration's
// start commit (lib/ratchet). A count below the best, or a ratchet that
// fails or prints no count, turns the pass into a guard failure: nothing
// passes on a count the runner could not check. message says why, for
// guard.json and the end of guard.log (which failure.md shows the next
// attempt); it is "" when the ratchet held.
func runRatchet(in *cli.Interrupt, env *cli.Env, it stepctx.Iteration) (rec *iterdir.Ratchet, outcome string, code int, message string) {
	cfg, begin := it.Config, it.Begin
	argv := strings.Join(cfg.Guard.Ratchet, " ")
	rec = &iterdir.Ratchet{Argv: cfg.Guard.Ratchet, Count: -1, Best: -1}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return rec, Error, exit.RunnerError, fmt.Sprintf("test ratchet: %v", err)
	}
	best, commit, found, err := ratchet.Best(repo, begin.HeadBefore, begin.RunID)
	if err != nil {
		return rec, Error, exit.RunnerError, fmt.Sprintf("test ratchet: read the run's best count from git: %v", err)
	}
	if found {
		rec.Best, rec.BestCommit = best, commit
	}
	var stdout, all bytes.Buffer
	spec := proc.Spec{
		Argv: cfg.Guard.Ratchet, Dir: env.Dir, Deadline: begin.Deadline,
		Env:    append(os.Environ(), EnvGuardLog+"="+filepath.Join(it.Dir, iterdir.GuardLog)),
		Stdout: proc.NewCappedWriter(&stdout, ratchetOutputLimit),
		Log:    proc.NewCappedWriter(&all, ratchetOutputLimit),
	}
	res, runErr := proc.Run(in, spec)
	rec.ExitCode, rec.DurationMS = res.ExitCode, res.Duration.Milliseconds()
	var se *proc.StartError
	switch {
	case errors.As(runErr, &se):
		return rec, Error, exit.RunnerError, fmt.Sprintf("test ratchet could not start: %v (install it, or fix [guard] ratchet in %s)", se, layout.Config)
	case runErr != nil:
		return rec, Error, exit.RunnerError, fmt.Sprintf("test ratchet: %v", runErr)
	case res.Canceled:
		return rec, Interrupted, in.Code(), "test ratchet interrupted by " + in.Cause()
	case res.TimedOut:
		return rec, Timeout, exit.Timeout, "test ratchet timed out: the iteration's budget ended"
	case res.ExitCode != 0:
		return rec, Fail, exit.Negative, fmt.Sprintf("the guard passed but the test ratchet (`%s`) failed (exit %d), so the node does not pass: %s", argv, res.ExitCode, lastLine(all.Bytes()))
	}
	n, err := ratchet.Parse(stdout.Bytes())
	if err != nil {
		return rec, Fail, exit.Negative, fmt.Sprintf("the guard passed but the test ratchet (`%s`) gave no count, so the node does not pass: %v", argv, err)
	}
	rec.Count = n
	if found && n < best {
		return rec, Fail, exit.Negative, fmt.Sprintf("the guard passed but only %d tests passed, fewer than the %d this run reached (commit %.12s): deleting, skipping or renaming tests does not pass a node; make the tests pass", n, best, commit)
	}
	rec.Held = true
	return rec, Pass, exit.OK, ""
}

// lastLine is the last non-empty line of out, for a one-line message.
func lastLine(out []byte) string {
	s := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return "no output"
	}
	return s
}

// appendLog adds the runner's note to the end of guard.log, where
// failure.md shows it to the next attempt; a failure to write is only
// warned about (guard.json holds the message too).
func appendLog(env *cli.Env, path, msg string) {
	if msg == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = fmt.Fprintf(f, "\n[treeloop] %s\n", msg)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		env.Warnf("append to %s: %v", iterdir.GuardLog, err)
	}
}
