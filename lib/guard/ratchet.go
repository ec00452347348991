package guard

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/ratchet"
	"github.com/treeloop/treeloop/lib/testresults"
)

// ratchetOutputLimit caps what the ratchet command may print.
const ratchetOutputLimit = 64 << 10

// EnvGuardLog names the guard's log for the ratchet command, so it can
// count from the guard's own output instead of running the tests again.
const EnvGuardLog = "RUNNER_GUARD_LOG"

// Best is the run's best so far (lib/ratchet): its test count, and the
// names of the tests that passed then.
type Best struct {
	Count  int
	Commit string
	Found  bool     // false: nothing recorded yet, any count holds
	Names  []string // sorted; nil when none is recorded for the run
}

// RunBest reads the run's best from the commit the step started from
// (guard-run's --base, which the agent cannot change, else begin.json's
// head_before as verified by stepctx): the tests that passed at the run's
// last pass or baseline as committed in base (verified by hash: lib/git),
// and, with count, the ratchet's best count from the run's commits.
func RunBest(root, runID, base string, count bool) (Best, error) {
	repo, err := git.Open(root)
	if err != nil {
		return Best{}, err
	}
	var b Best
	if count {
		if b.Count, b.Commit, b.Found, err = ratchet.Best(repo, base, runID); err != nil {
			return Best{}, err
		}
	}
	data, ok, err := repo.ShowFile(base, layout.TestsPassed)
	if err != nil {
		return Best{}, err
	}
	if ok {
		b.Names, _ = ratchet.ParseNames(runID, data)
	}
	return b, nil
}

// judgeEvents is the ratchet by names after a green guard: any failure
// the guard's output reports fails it whatever its exit status, and so
// does a test of the run's best that did not pass. message is "" when
// both hold.
func judgeEvents(rec *iterdir.Ratchet, ev *testresults.Stream, best Best) (message string) {
	res := ev.Results()
	rec.Passed = res.With(testresults.Passed)
	rec.Failed = append(res.With(testresults.Failed), res.With(testresults.Error)...)
	sort.Strings(rec.Failed)
	rec.Names = len(rec.Passed)
	if rec.Names == 0 {
		rec.Names = -1
	}
	rec.Missing = res.Missing(best.Names)
	switch {
	case len(rec.Failed) > 0:
		return fmt.Sprintf("the guard exited 0 but its output reports failing tests (%s), so the node does not pass: make them pass", list(rec.Failed))
	case len(rec.Missing) > 0:
		return fmt.Sprintf("the guard passed but tests that passed at this run's best did not pass now (%s): deleting, skipping or renaming tests does not pass a node; make them pass", list(rec.Missing))
	}
	return ""
}

// list names up to ten of names, and how many more.
func list(names []string) string {
	if len(names) > 10 {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:10], ", "), len(names)-10)
	}
	return strings.Join(names, ", ")
}

// runRatchet runs [guard] ratchet after a green guard and compares its
// count with best. A count below the best, or a ratchet that fails or
// prints no count, turns the pass into a guard failure: nothing passes on
// a count the runner could not check. message says why, for guard.json
// and the end of the guard's log (which failure.md shows the next
// attempt); it is "" when the ratchet held.
func runRatchet(in *cli.Interrupt, env *cli.Env, cfg config.Config, deadline time.Time, logPath string, best Best, ev *testresults.Stream) (rec *iterdir.Ratchet, outcome string, code int, message string) {
	argv := strings.Join(cfg.Guard.Ratchet, " ")
	rec = &iterdir.Ratchet{Argv: cfg.Guard.Ratchet, Count: -1, Best: -1, Names: -1}
	if best.Found {
		rec.Best, rec.BestCommit = best.Count, best.Commit
	}
	var stdout, all bytes.Buffer
	spec := proc.Spec{
		Argv: cfg.Guard.Ratchet, Dir: env.Dir, Deadline: deadline,
		Env:    append(git.Strip(os.Environ()), EnvGuardLog+"="+logPath),
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
	if best.Found && n < best.Count {
		return rec, Fail, exit.Negative, fmt.Sprintf("the guard passed but only %d tests passed, fewer than the %d this run reached (commit %.12s): deleting, skipping or renaming tests does not pass a node; make the tests pass", n, best.Count, best.Commit)
	}
	if msg := judgeEvents(rec, ev, best); msg != "" {
		return rec, Fail, exit.Negative, msg
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

// Note adds the runner's note to the end of guard.log, where
// failure.md shows it to the next attempt; a failure to write is only
// warned about (guard.json holds the message too).
func Note(env *cli.Env, path, msg string) {
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
