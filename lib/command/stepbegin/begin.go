package stepbegin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/iterlog"
	"github.com/treeloop/treeloop/lib/command/loopcommit"
	"github.com/treeloop/treeloop/lib/command/treeselect"
	"github.com/treeloop/treeloop/lib/command/treeupdate"
	"github.com/treeloop/treeloop/lib/command/treevalidate"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/runcheck"
	"github.com/treeloop/treeloop/lib/runlock"
	"github.com/treeloop/treeloop/lib/tree"
)

// step is the start of one runner-step.
type step struct {
	env   *cli.Env
	pid   int
	in    *cli.Interrupt
	facts facts
	// The first commands, in this process: loop-commit check,
	// tree-validate, tree-select and runner-check.
	check       *plumbing.Typed[loopcommit.CheckResult]
	validate    *plumbing.Job
	sel         *plumbing.Typed[tree.Selection]
	runnerCheck *plumbing.Typed[runcheck.Report]
	ahead       *plumbing.Typed[allocation] // the iteration allocated ahead, once started
	allocated   string                      // an allocated iteration's directory, until it begins
	signaled    int                         // a signal the step got before it started (--signaled)
	jobs        []*plumbing.Job             // every job started, waited for before the step goes on
}

// track keeps job among those waited for before the step goes on.
func (s *step) track(j *plumbing.Job) { s.jobs = append(s.jobs, j) }

// recovery is iter-log recover, in process: what completes the
// iteration a crash or kill left unfinished.
func (s *step) recovery(env *cli.Env) (iterdir.Recovery, error) {
	rec, err := iterdir.Recover(env.Dir)
	if err != nil {
		return rec, exit.Errorf(exit.RunnerError, "%v", err)
	}
	if rec.Warning != "" {
		env.Warnf("%s", rec.Warning)
	}
	return rec, nil
}

// runnerChecks is runner-check, in process, on the configuration rc
// read: its report, exit 1 when a check found a problem.
func runnerChecks(rc *runcheck.Context, env *cli.Env) (runcheck.Report, error) {
	if _, err := os.Stat(env.Abs(layout.Runner)); err != nil {
		return runcheck.Report{}, exit.Errorf(exit.Negative, "no %s in %s: run runner-init --goal GOAL.md, then runner-start", layout.Runner, env.Dir)
	}
	rep := rc.Run()
	if !rep.OK {
		return rep, cli.Silent(exit.Negative)
	}
	return rep, nil
}

// waitAll waits for the jobs not taken (a refusal ended the step first):
// none outlives the start of the step.
func (s *step) waitAll() {
	for _, j := range s.jobs {
		j.Wait()
	}
}

// signal is 130 or 143 once a signal came (before the start, or since),
// else 0.
func (s *step) signal() int {
	if c := s.in.Code(); c != 0 {
		return c
	}
	return s.signaled
}

func newStep(env *cli.Env, pid int) *step {
	return &step{env: env, pid: pid, in: cli.NotifyInterrupt(), facts: facts{"owned": "0", "context_failed": "0"}}
}

// firstCommands (re)starts the first commands, side by side in this
// process. tree-select selects under the configuration's stuck_policy; a
// configuration that does not load leaves it the default, stop, and
// runner-check refuses it.
func (s *step) firstCommands() {
	s.check = plumbing.Go("loop-commit check", s.env, (&loopcommit.CheckCmd{}).Check)
	s.track(s.check.Job)
	validate := &treevalidate.Options{Audit: true, KeepAudit: true}
	s.validate = plumbing.Go("tree-validate", s.env, func(env *cli.Env) (struct{}, error) { return struct{}{}, validate.Run(env) }).Job
	s.track(s.validate)
	rc := runcheck.Load(s.env.Dir)
	policy := config.StuckStop
	if rc.ConfigErr == nil {
		policy = rc.Config.StuckPolicy
	}
	s.sel = plumbing.Go("tree-select", s.env, (&treeselect.Options{StuckPolicy: policy}).Select)
	s.track(s.sel.Job)
	s.runnerCheck = plumbing.Go("runner-check", s.env, func(env *cli.Env) (runcheck.Report, error) { return runnerChecks(rc, env) })
	s.track(s.runnerCheck.Job)
}

// waitFirst waits for the first commands, showing nothing.
func (s *step) waitFirst() {
	for _, j := range []*plumbing.Job{s.check.Job, s.validate, s.sel.Job, s.runnerCheck.Job} {
		j.Wait()
	}
}

// lock takes the runner lock as runner-step (runner-enter lock): one
// runner per repository, held until runner-step exits.
func (s *step) lock() int {
	warn, err := runlock.Enter(s.env.Abs(layout.Lock), layout.Lock, s.pid, "runner-step")
	if warn != nil {
		s.env.Warnf("%v", warn)
	}
	switch {
	case errors.Is(err, runlock.ErrHeld):
		fmt.Fprintf(s.env.Stderr, "runner-step: %v\n", err)
		s.facts["lock"] = "refused"
		return exit.Negative
	case err != nil:
		fmt.Fprintf(s.env.Stderr, "runner-step: %v\n", err)
		return exit.RunnerError
	}
	return exit.OK
}

// begin runs the start of the step and returns its exit code.
func (s *step) begin() int {
	recovery := plumbing.Go("iter-log recover", s.env, s.recovery)
	s.track(recovery.Job)
	s.firstCommands()
	if code := s.recover(recovery); code != exit.OK {
		return code
	}
	if code := s.applyAnswers(); code != exit.OK {
		return code
	}
	if code := s.checks(); code != exit.OK {
		return code
	}
	if code := s.allocate(); code != exit.OK {
		return code
	}
	// The last moment to stop without an iteration: a signal or the
	// cancel file from here on reaches the session, and the iteration is
	// committed as interrupted.
	if code := s.stopped(); code != exit.OK {
		return code
	}
	s.allocated = ""
	return exit.OK
}

// stopped ends the step before an iteration began, once a signal came or
// the cancel file stands (an iteration allocated is removed: no session
// ran in it); exit.OK otherwise.
func (s *step) stopped() int {
	if code := s.interrupted(); code != exit.OK {
		return code
	}
	if _, err := os.Stat(s.env.Abs(layout.Cancel)); err != nil {
		return exit.OK
	}
	s.discardAhead()
	fmt.Fprintln(s.env.Stdout, "step: interrupted reason=cancel-file")
	// The request is used up by the runner it stops: runner-loop, which
	// says so, or this step when it runs alone.
	if _, underLoop := os.LookupEnv("TREELOOP_RECORD"); !underLoop {
		cancel.Stopped(s.env.Dir, "runner-step", s.env.Stderr)
	}
	s.facts["end_status"] = "canceled"
	s.facts["end_reason"] = "canceled by .runner/cancel before an iteration began"
	return exit.SIGINT
}

// interrupted ends the step before an iteration began, once a signal
// came; exit.OK otherwise.
func (s *step) interrupted() int {
	code := s.signal()
	if code == 0 {
		return exit.OK
	}
	s.discardAhead()
	word := "SIGINT"
	if code == exit.SIGTERM {
		word = "SIGTERM"
	}
	fmt.Fprintf(s.env.Stdout, "step: interrupted reason=%s\n", word)
	fmt.Fprintf(s.env.Stderr, "runner-step: interrupted by %s before an iteration began; nothing was run\n", word)
	s.facts["end_reason"] = "interrupted by " + word + " before an iteration began"
	return code
}

// discardAhead removes the iteration allocated ahead, or the one
// allocated (the step ends before it starts).
func (s *step) discardAhead() {
	if s.allocated != "" {
		os.RemoveAll(s.env.Abs(s.allocated))
		s.allocated = ""
	}
	if s.ahead == nil {
		return
	}
	if d := s.ahead.Value().Began.Dir; d != "" {
		if st, err := os.Stat(s.env.Abs(d)); err == nil && st.IsDir() {
			os.RemoveAll(s.env.Abs(d))
		}
	}
	s.ahead = nil
}

// recover commits the iteration a crash or kill left unfinished, as
// interrupted (no attempt consumed), before anything else: iter-log
// recover ran beside the first commands, which read what it leaves as it
// is when there is nothing to recover; when there is, they run again
// once the iteration is committed.
func (s *step) recover(recovery *plumbing.Typed[iterdir.Recovery]) int {
	code, _ := recovery.Collect(nil, s.env.Stderr)
	if code != exit.OK {
		if c := s.interrupted(); c != exit.OK {
			return c
		}
		return exit.RunnerError
	}
	rec := recovery.Value()
	if rec.Action == "" || rec.Action == "none" {
		return exit.OK
	}
	s.waitFirst()
	s.removeStaleLocks()
	if rec.Action == "discarded" {
		fmt.Fprintf(s.env.Stderr, "runner-step: set aside the unstarted iteration directory %s\n", rec.Dir)
		return exit.OK
	}
	if code := s.complete(rec); code != exit.OK {
		return code
	}
	fmt.Fprintf(s.env.Stdout, "step: recovered %s (action=%s)\n", rec.Dir, rec.Action)
	s.facts["recovered"] = "1"
	s.firstCommands()
	return exit.OK
}

// complete completes and commits the iteration rec found unfinished:
// what no session may change put back (agent-exec --restore, a command
// of its own: it undoes what a session did, and a crash of it is its
// own), the tree recorded as interrupted (tree-update), the log closed
// (iter-log end) and the iteration committed (loop-commit commit), as
// far as the action says it was not.
func (s *step) complete(rec iterdir.Recovery) int {
	if rec.Action == "update" {
		if plumbing.Held(s.env.Stderr, s.env.Stderr, "agent-exec", "--iter", rec.Dir, "--restore") != exit.OK {
			return exit.RunnerError
		}
		update := &treeupdate.Options{Iter: rec.Dir, Tree: layout.Tree, Selected: rec.Selected,
			Guard: tree.GuardSkipped, Outcome: treeupdate.OutcomeInterrupted}
		if s.call("tree-update", func(env *cli.Env) error { _, err := update.Update(env); return err }) != exit.OK {
			return exit.RunnerError
		}
	}
	if rec.Action != "commit" {
		end := &iterlog.EndCmd{Iter: rec.Dir}
		if s.call("iter-log end", func(env *cli.Env) error { _, err := end.End(env); return err }) != exit.OK {
			return exit.RunnerError
		}
	}
	commit := &loopcommit.CommitCmd{Iter: rec.Dir}
	if s.call("loop-commit commit", func(env *cli.Env) error { _, err := commit.Commit(env); return err }) != exit.OK {
		return exit.RunnerError
	}
	return exit.OK
}

// call runs a command's core in this process, its output shown on the
// step's stderr (cli.Call): its exit code.
func (s *step) call(name string, core func(*cli.Env) error) int {
	e := *s.env
	e.Stdout = s.env.Stderr
	return cli.Call(name, &e, core)
}

// removeStaleLocks removes git's lock files a step killed inside git left
// (the index, HEAD, packed-refs, the branch ref): the step holds the
// runner lock and the one that took them is gone.
func (s *step) removeStaleLocks() {
	var ref strings.Builder
	plumbing.Held(&ref, io.Discard, "git", "symbolic-ref", "-q", "HEAD")
	names := []string{"index.lock", "HEAD.lock", "packed-refs.lock"}
	if r := strings.TrimSpace(ref.String()); r != "" {
		names = append(names, r+".lock")
	}
	for _, name := range names {
		var p strings.Builder
		plumbing.Held(&p, io.Discard, "git", "rev-parse", "--git-path", name)
		stale := strings.TrimRight(p.String(), "\n")
		if _, err := os.Stat(s.env.Abs(stale)); stale != "" && err == nil {
			fmt.Fprintf(s.env.Stderr, "runner-step: removing %s left by the interrupted step\n", stale)
			os.Remove(s.env.Abs(stale))
		}
	}
}

// applyAnswers commits the answers operators queued while a runner held
// the lock (tree-edit answer, runner-ui), each an operator edit, once the
// first commands have read what they read; they run again after it.
func (s *step) applyAnswers() int {
	queued, _ := filepath.Glob(s.env.Abs(filepath.Join(layout.Answers, "[^.]*")))
	if len(queued) == 0 {
		return exit.OK
	}
	s.waitFirst()
	if plumbing.Held(s.env.Stderr, s.env.Stderr, "tree-edit", "apply-answers") != exit.OK {
		return exit.RunnerError
	}
	s.firstCommands()
	return exit.OK
}
