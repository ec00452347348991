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
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/runcheck"
	"github.com/treeloop/treeloop/lib/runlock"
)

// step is the start of one runner-step.
type step struct {
	env   *cli.Env
	pid   int
	in    *cli.Interrupt
	facts facts
	// The first commands: loop-commit check, tree-validate, tree-select
	// and runner-check.
	check, validate, sel, runnerCheck *plumbing.Job
	ahead                             *plumbing.Job   // the iteration allocated ahead, once started
	allocated                         string          // an allocated iteration's directory, until it begins
	signaled                          int             // a signal the step got before it started (--signaled)
	jobs                              []*plumbing.Job // every job started, waited for before the step goes on
}

// start runs argv in the background as one of the step's jobs.
func (s *step) start(argv ...string) *plumbing.Job {
	j := plumbing.Start(argv...)
	s.jobs = append(s.jobs, j)
	return j
}

// spawn runs f in process in the background as one of the step's jobs.
func (s *step) spawn(f func(stdout, stderr io.Writer) int) *plumbing.Job {
	j := plumbing.Spawn(f)
	s.jobs = append(s.jobs, j)
	return j
}

// recovery is iter-log recover, in process: the line it prints.
func (s *step) recovery(stdout, stderr io.Writer) int {
	rec, err := iterdir.Recover(s.env.Dir)
	if err != nil {
		fmt.Fprintf(stderr, "iter-log: %v\n", err)
		return exit.RunnerError
	}
	if rec.Warning != "" {
		fmt.Fprintf(stderr, "iter-log: warning: %s\n", rec.Warning)
	}
	fmt.Fprintln(stdout, rec)
	return exit.OK
}

// runnerChecks is runner-check, in process, on the configuration rc
// read: its lines, exit 1 when a check found a problem.
func (s *step) runnerChecks(rc *runcheck.Context, stdout, stderr io.Writer) int {
	if _, err := os.Stat(s.env.Abs(layout.Runner)); err != nil {
		fmt.Fprintf(stderr, "runner-check: no %s in %s: run runner-init --goal GOAL.md, then runner-start\n", layout.Runner, s.env.Dir)
		return exit.Negative
	}
	rep := rc.Run()
	for _, l := range rep.Lines() {
		fmt.Fprintln(stdout, l)
	}
	if !rep.OK {
		return exit.Negative
	}
	return exit.OK
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

// firstCommands (re)starts the first commands. tree-select selects
// under the configuration's stuck_policy; a configuration that does not
// load leaves it the default, stop, and runner-check refuses it.
func (s *step) firstCommands() {
	s.check = s.start("loop-commit", "check")
	s.validate = s.start("tree-validate", "--audit", "--keep-audit")
	rc := runcheck.Load(s.env.Dir)
	policy := config.StuckStop
	if rc.ConfigErr == nil {
		policy = rc.Config.StuckPolicy
	}
	s.sel = s.start("tree-select", "--stuck-policy", policy)
	s.runnerCheck = s.spawn(func(stdout, stderr io.Writer) int { return s.runnerChecks(rc, stdout, stderr) })
}

// waitFirst waits for the first commands, showing nothing.
func (s *step) waitFirst() {
	for _, j := range []*plumbing.Job{s.check, s.validate, s.sel, s.runnerCheck} {
		j.Peek()
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
	recovery := s.spawn(s.recovery)
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
	_, out := s.ahead.Peek()
	if d := plumbing.Fields(out)["dir"]; d != "" {
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
func (s *step) recover(recovery *plumbing.Job) int {
	code, out := recovery.Collect(nil, s.env.Stderr)
	if code != exit.OK {
		if c := s.interrupted(); c != exit.OK {
			return c
		}
		return exit.RunnerError
	}
	kv := plumbing.Fields(out)
	action, dir := kv["action"], kv["dir"]
	if action == "" || action == "none" {
		return exit.OK
	}
	s.waitFirst()
	s.removeStaleLocks()
	if action == "discarded" {
		fmt.Fprintf(s.env.Stderr, "runner-step: set aside the unstarted iteration directory %s\n", dir)
		return exit.OK
	}
	steps := [][]string{{"loop-commit", "--iter", dir}}
	if action != "commit" {
		steps = append([][]string{{"iter-log", "end", "--iter", dir}}, steps...)
	}
	if action == "update" {
		steps = append([][]string{{"agent-exec", "--iter", dir, "--restore"},
			{"tree-update", "--iter", dir, "--selected", kv["selected"], "--outcome", "interrupted"}}, steps...)
	}
	for _, argv := range steps {
		stdout := io.Discard
		if argv[0] == "agent-exec" {
			stdout = s.env.Stderr
		}
		if plumbing.Held(stdout, s.env.Stderr, argv...) != exit.OK {
			return exit.RunnerError
		}
	}
	fmt.Fprintf(s.env.Stdout, "step: recovered %s (action=%s)\n", dir, action)
	s.facts["recovered"] = "1"
	s.firstCommands()
	return exit.OK
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
