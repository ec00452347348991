// Package runnerrecord is the runner-record command: the porcelain's writer
// of run records, .runner/runs/<id>.json (seed 004 "run records", DESIGN.md
// decision 15). `begin` opens (or re-attaches) the record of a
// runner session, finalising any record a killed runner left running;
// `update` refreshes it after a committed iteration and runs the on_iteration
// hook; `end` finishes it with the run's status and a one-line reason and
// runs the hook of that status; `detach` leaves it running with no runner
// attached (a runner-step run alone, whose run goes on with the next step);
// `decide` is runner-loop's decision table, from a step's exit code to what
// the loop does next.
//
// A record is the session's, not the run id's: a run resumed after it
// finished (stuck, then tree-edit retry, then runner-loop) gets a new record
// <run-id>.<n>, since a finished record is never rewritten.
package runnerrecord

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/tree"
)

// Options is the command line of runner-record.
type Options struct {
	cli.Chdir
	Begin  BeginCmd  `cmd:"" help:"Open the run record of a runner session (status running, this runner's pid and host), first finalising as interrupted any record whose runner is gone. Re-attaches a record a runner-step left detached. Prints record=<id>, or record=none when no run is started or .runner/runs/ is not ignored by git."`
	Update UpdateCmd `cmd:"" help:"Refresh the record after a committed iteration (counts, usage, last iteration, HEAD) and run the on_iteration hook."`
	End    EndCmd    `cmd:"" help:"Finish the record with the run's status and a one-line reason, and run the hook of that status (on_complete, on_stuck, on_limit, on_error). A finished record is never rewritten."`
	Detach DetachCmd `cmd:"" help:"Leave the record running with no runner attached (pid 0): a runner-step run alone ended without ending the run (an iteration committed, or the step refused or failed) and the run goes on with the next step."`
	Pause  PauseCmd  `cmd:"" help:"The run's last iteration paused on a usage limit or an outage: decide until when the run pauses (a usage limit: the reset the session reported, capped at [agent] max_pause from now, else 30 s doubling to 15 min; an outage: 10 s doubling to 15 min), record it (status paused, pause.cause) and run the on_pause hook. Prints until=<time> secs=<n> reason=<usage-limit|outage>; exit 4 (limit reason=max-pause) when the pause and the pausing already done would exceed [agent] max_pause."`
	Wait   WaitCmd   `cmd:"" help:"Wait until a time (--until) or an operator's answer (--answer), on events: a timer, the answer queue, the cancel file, SIGINT or SIGTERM end it at once. Prints resumed secs=<n> or answered, and records the run running again; exit 130/143 (interrupted reason=…) on the cancel file or a signal."`
	Decide DecideCmd `cmd:"" help:"runner-loop's decision table: what a step's exit code makes of the loop (go on, pause, wait for an answer, or stop with its exit code), the line runner-loop prints and the run record's reason. A signal turns 0, 5, 7 and 8 into its code; 130/143 stop (interrupted reason=SIGINT|SIGTERM, or reason=cancel-file when .runner/cancel stopped it and no signal came); a runner error's reason is the committed iteration's meta.json summary. Writes the decision on --data-fd; prints nothing."`
}

// Main runs runner-record and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-record", "Write the run record of a runner session, .runner/runs/<id>.json (used by runner-step and runner-loop). Hook failures are logged in the record and never change the exit code.", &Options{}, args, stdin, stdout, stderr)
}

// now is the time the records are stamped with (runrecord.Now).
func now() time.Time { return runrecord.Now() }

// recordFlag names the record the porcelain got from begin.
type recordFlag struct {
	Record string `required:"" placeholder:"ID" help:"The record id printed by runner-record begin."`
}

// check refuses a --record that is not a record id.
func (f recordFlag) check() error {
	if !tree.ValidID(f.Record) {
		return exit.Errorf(exit.Usage, "--record %q is not a record id", f.Record)
	}
	return nil
}

func (f recordFlag) load(env *cli.Env) (string, runrecord.Record, error) {
	if err := f.check(); err != nil {
		return "", runrecord.Record{}, err
	}
	path, r, err := runrecord.OpenLive(env.Dir, f.Record)
	if err != nil {
		return "", r, exit.Errorf(exit.RunnerError, "%v", err)
	}
	return path, r, nil
}

// BeginCmd is `runner-record begin`.
type BeginCmd struct {
	PID    int `required:"" help:"The runner's process id (runner-loop's, or runner-step's when run alone)."`
	DataFD int `name:"data-fd" placeholder:"FD" help:"Write the record id on descriptor FD as a shell assignment for runner-loop to eval, record='<id>' ('' for none), then exit=0, instead of the line on stdout."`
}

// Run opens the session's record (runrecord.Begin).
func (b *BeginCmd) Run(env *cli.Env) error {
	id, err := runrecord.Begin(env.Dir, b.PID, func(w string) { env.Warnf("%s", w) })
	if err != nil {
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	if b.DataFD > 0 {
		return plumbing.Facts{"record": id, "exit": "0"}.Write(b.DataFD)
	}
	if id == "" {
		id = "none"
	}
	fmt.Fprintf(env.Stdout, "record=%s\n", id)
	return nil
}

// UpdateCmd is `runner-record update`.
type UpdateCmd struct {
	recordFlag
	Detach bool `help:"Also leave the record running with no runner attached, as detach does (runner-step run alone, after its committed iteration: one write instead of two)."`
}

// Run refreshes the record and runs on_iteration; with --detach it also
// clears the runner.
func (u *UpdateCmd) Run(env *cli.Env) error {
	if err := u.check(); err != nil {
		return err
	}
	in := cli.NotifyInterrupt()
	defer in.Stop()
	if err := runrecord.Update(env.Dir, u.Record, hooksOf(env, in), u.Detach); err != nil {
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	return nil
}

// EndCmd is `runner-record end`.
type EndCmd struct {
	recordFlag
	Status string `placeholder:"STATUS" help:"How the run ended: complete, stuck, limit, timeout, interrupted, canceled, error, waiting (every open leaf waits for an answer) or paused (a usage limit or an outage, runner-loop --no-pause). With --exit, it replaces the status the exit code gives (canceled for interrupted)."`
	Exit   *int   `placeholder:"N" help:"The porcelain's exit code (--by): the status follows from it. runner-loop: 0 complete, 3 stuck, 4 limit, 7 waiting, 8 paused, 124 timeout, 130/143 interrupted, other error. runner-step: 2 complete, 3 stuck, 4 limit, 7 waiting, 124 timeout, 130/143 interrupted; 0, 5, 8 (an iteration committed) leave the record running without a runner (as detach; no write when it already is), other codes (a refusal, a runner error) too, logging \"runner-step exit N\" (kind step_failed)."`
	By     string `enum:"runner-loop,runner-step" default:"runner-loop" help:"The porcelain whose exit code --exit gives: runner-loop or runner-step."`
	Reason string `help:"One line: why the run ended (default with --exit: \"<by> ended with exit N\")."`
	PID    int    `placeholder:"PID" help:"The runner that ends the run (runner-step's pid when it runs alone): a record left running without a runner (detached) names it, with this host, when it ends."`
}

// endStatuses are the statuses a run ends with.
var endStatuses = []string{runrecord.Complete, runrecord.Stuck, runrecord.Limit, runrecord.Timeout, runrecord.Interrupted,
	runrecord.Canceled, runrecord.Error, runrecord.Waiting, runrecord.Paused}

// hookFor is the hook run when a run ends with status; "" for none
// (interrupted and canceled: somebody stopped it on purpose).
func hookFor(status string) string {
	switch status {
	case runrecord.Complete:
		return "on_complete"
	case runrecord.Stuck:
		return "on_stuck"
	case runrecord.Limit:
		return "on_limit"
	case runrecord.Error, runrecord.Timeout:
		return "on_error"
	}
	return ""
}

// Run finishes the record, or with --exit does what the porcelain's exit
// code says (runrecord.EndOfExit).
func (e *EndCmd) Run(env *cli.Env) error {
	status, reason := e.Status, e.Reason
	if e.Exit != nil {
		code := *e.Exit
		st, failed := runrecord.EndOfExit(e.By, code)
		if st == "" {
			d := DetachCmd{recordFlag: e.recordFlag}
			if failed {
				d.Failed = fmt.Sprintf("%s exit %d", e.By, code)
			}
			return d.run(env, true)
		}
		if status == "" {
			status = st
		}
		if reason == "" {
			reason = fmt.Sprintf("%s ended with exit %d", e.By, code)
		}
	}
	if status == "" || reason == "" {
		return exit.Errorf(exit.Usage, "give --status and --reason, or --exit: how the run ended")
	}
	if !slices.Contains(endStatuses, status) {
		return exit.Errorf(exit.Usage, "--status %q is not one of %s", status, strings.Join(endStatuses, ", "))
	}
	path, r, err := e.load(env)
	if err != nil {
		return err
	}
	rp, rerr := runrecord.ReadRepo(env.Dir)
	if rerr == nil {
		rerr = rp.Refresh(&r, true)
	}
	if rerr != nil {
		// The run may have ended because the repository is broken: the
		// record still ends, with what it had.
		env.Warnf("refresh the run record: %v", rerr)
	}
	if r.Runner.PID == 0 && e.PID > 0 {
		host, _ := os.Hostname()
		r.Runner = runrecord.Runner{PID: e.PID, Host: host}
	}
	reason = oneLine(reason)
	if status == runrecord.Stuck {
		reason = runrecord.StuckReason(reason, r.StuckLeaves)
	}
	t := now()
	r.Status, r.Reason, r.FinishedAt, r.UpdatedAt = status, reason, &t, t
	if h := hookFor(status); h != "" && rp != nil {
		runHook(env, &r, h, rp.Config.Hooks)
	}
	return save(path, r)
}

// DetachCmd is `runner-record detach`.
type DetachCmd struct {
	recordFlag
	Failed string `placeholder:"REASON" help:"The step failed without ending the run (refused, runner error): log REASON in the record (kind step_failed)."`
}

// Run leaves the record running without a runner.
func (d *DetachCmd) Run(env *cli.Env) error { return d.run(env, false) }

// run detaches the record; lazily, a record already without a runner and
// nothing to log is left unwritten (runner-record update --detach did it).
func (d *DetachCmd) run(env *cli.Env, lazily bool) error {
	path, r, err := d.load(env)
	if err != nil {
		return err
	}
	if lazily && d.Failed == "" && r.Runner == (runrecord.Runner{}) {
		return nil
	}
	r.Runner = runrecord.Runner{}
	r.UpdatedAt = now()
	if d.Failed != "" {
		r.AddLog(r.UpdatedAt, "step_failed", oneLine(d.Failed))
	}
	return save(path, r)
}

// save writes the record; a failure is a runner error.
func save(path string, r runrecord.Record) error {
	if err := runrecord.Save(path, r); err != nil {
		return exit.Errorf(exit.RunnerError, "write the run record: %v", fsutil.Cause(err))
	}
	return nil
}

// oneLine keeps the first line of s, trimmed.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(s)
}
