package runnerrecord

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/vocab"
)

// PauseCmd is `runner-record pause`.
type PauseCmd struct {
	Record string `placeholder:"ID" help:"The record id printed by runner-record begin; without it the pause is decided but recorded nowhere."`
	Paused int64  `placeholder:"SECS" help:"Seconds this runner has paused already (runner-loop adds them up), counted against [agent] max_pause; the record's own count (pause.total_secs) when it is more."`
	Steps  int    `placeholder:"N" help:"With --data-fd: the steps the loop has committed so far, for its line."`
	DataFD int    `name:"data-fd" placeholder:"FD" help:"Write runner-loop's decision on descriptor FD, as shell assignments for it to eval, instead of the line on stdout: action (pause, or stop when the pause does not fit [agent] max_pause, its refusal then on stderr), line (the loop's line to print), until (with pause), end_reason (with stop), then exit=<code> (4 with stop). Exit 0 once it is written."`
}

// lastPause is the run's last iteration, which a usage limit or an
// outage paused, and how many iterations in a row before it paused too.
type lastPause struct {
	meta        iterdir.Meta
	consecutive int // paused iterations in a row before this one
}

// readLastPause reads the run's iterations from the last one back while
// they paused.
func readLastPause(env *cli.Env) (lastPause, error) {
	rs, err := runstate.Load(env.Abs(layout.RunState))
	if err != nil {
		return lastPause{}, err
	}
	runID := runstate.Val(rs.RunID)
	if runID == "" {
		return lastPause{}, errors.New("no run started: run runner-start")
	}
	runDir := env.Abs(filepath.Join(layout.Iterations, runID))
	iters, err := iterdir.Iters(runDir)
	if err != nil {
		return lastPause{}, fmt.Errorf("read %s: %v", env.Rel(runDir), fsutil.Cause(err))
	}
	var lp lastPause
	for i := len(iters) - 1; i >= 0; i-- {
		var m iterdir.Meta
		if err := iterdir.Read(filepath.Join(runDir, layout.IterName(iters[i])), iterdir.MetaFile, &m); err != nil || m.Status != string(vocab.StatusPaused) {
			break
		}
		if lp.meta.Iteration == 0 {
			lp.meta = m
		} else {
			lp.consecutive++
		}
	}
	if lp.meta.Iteration == 0 {
		return lastPause{}, errors.New("the run's last iteration did not pause on a usage limit or an outage: nothing to wait for")
	}
	return lp, nil
}

// pausePlan is a pause decided.
type pausePlan struct {
	cause   vocab.PauseCause
	reason  string        // the session's failure message (one line)
	until   time.Time     // when the run tries a fresh session again
	wait    time.Duration // until, from now
	capped  string        // the reported reset, when it lay beyond max_pause (until is then max_pause from now)
	paused  time.Duration // the pausing already done that counts
	fits    bool          // paused and wait together stay within max_pause
	maxWait time.Duration // [agent] max_pause
}

// planPause decides the pause after the run's last paused iteration lp at
// now: until the reset the session reported, else a backoff
// (agent.PauseUntil), and never beyond max (a reset reported later than
// that is capped at it: a session's word alone does not end the night).
// paused is the pausing this runner session did already (the larger of
// runner-loop's count and the record's): with it the pause must stay
// within max, else it does not fit (max 0: no pause fits).
func planPause(lp lastPause, now time.Time, paused, max time.Duration) pausePlan {
	p := pausePlan{cause: vocab.PauseUsageLimit, reason: "a usage limit", paused: paused, maxWait: max}
	class, reset := agent.ClassRateLimit, ""
	if a := lp.meta.Agent; a != nil {
		class, reset = a.Class, a.ResetAt
		if a.Message != "" {
			p.reason = oneLine(a.Message)
		}
	}
	if class == agent.ClassOutage {
		p.cause = vocab.PauseOutage
		if lp.meta.Agent.Message == "" {
			p.reason = "an outage"
		}
	}
	p.until = agent.PauseUntil(class, reset, lp.consecutive, now).UTC().Truncate(time.Second)
	if lim := now.Add(max).UTC().Truncate(time.Second); max > 0 && p.until.After(lim) {
		if p.cause == vocab.PauseUsageLimit && reset != "" {
			p.capped = reset
		}
		p.until = lim
	}
	p.wait = p.until.Sub(now)
	p.fits = max > 0 && paused+p.wait <= max
	return p
}

// Run decides how long the run pauses, records it and runs on_pause.
func (p *PauseCmd) Run(env *cli.Env) error {
	lp, err := readLastPause(env)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	cfg, err := config.Load(env.Abs(layout.Config), os.LookupEnv)
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	var path string
	var r runrecord.Record
	paused := time.Duration(p.Paused) * time.Second
	if p.Record != "" {
		if path, r, err = (recordFlag{Record: p.Record}).load(env); err != nil {
			return err
		}
		if r.Pause != nil {
			paused = max(paused, time.Duration(r.Pause.TotalSecs)*time.Second)
		}
	}
	start := time.Now()
	plan := planPause(lp, start, paused, cfg.Agent.MaxPause.Duration)
	if !plan.fits && p.DataFD > 0 {
		env.Errorf("%s", plan.refusal())
		return pauseDecision(plan, p.Steps).Write(p.DataFD)
	}
	if !plan.fits {
		fmt.Fprintf(env.Stdout, "limit reason=max-pause until=%s\n", plan.until.Format(time.RFC3339))
		return exit.Errorf(exit.Limit, "%s", plan.refusal())
	}
	if plan.capped != "" {
		env.Warnf("iteration %d: the reported reset %s lies beyond [agent] max_pause (%s): the pause ends at %s", lp.meta.Iteration, plan.capped, plan.maxWait, plan.until.Format(time.RFC3339))
	}
	if p.Record != "" {
		if err := recordPause(env, path, r, lp, plan, cfg.Hooks, start); err != nil {
			return err
		}
	}
	if p.DataFD > 0 {
		return pauseDecision(plan, p.Steps).Write(p.DataFD)
	}
	fmt.Fprintf(env.Stdout, "until=%s secs=%d reason=%s\n", plan.until.Format(time.RFC3339), int64(plan.wait.Round(time.Second)/time.Second), plan.cause)
	return nil
}

// pauseDecision is runner-loop's decision on plan after steps committed
// steps (--data-fd): pause until plan.until with the line that says so,
// or, when the pause does not fit [agent] max_pause, stop with exit 4 (a
// limit) and the run record's reason.
func pauseDecision(plan pausePlan, steps int) plumbing.Facts {
	n := " steps=" + strconv.Itoa(steps)
	if !plan.fits {
		return plumbing.Facts{"action": actStop, "line": "loop: limit reason=max-pause" + n, "until": "",
			"end_reason": "limit: max-pause: a usage limit or an outage outlasts [agent] max_pause", "exit": strconv.Itoa(exit.Limit)}
	}
	until := plan.until.Format(time.RFC3339)
	return plumbing.Facts{"action": actPause, "line": "loop: paused reason=" + string(plan.cause) + " until=" + until + n, "until": until,
		"end_reason": "", "exit": ""}
}

// refusal words a pause that does not fit max_pause.
func (p pausePlan) refusal() string {
	what := fmt.Sprintf("the usage limit lifts at %s", p.until.Format(time.RFC3339))
	again := "run runner-loop again after the reset"
	if p.capped != "" {
		what = fmt.Sprintf("the usage limit lifts at %s (reported; capped at %s)", p.capped, p.until.Format(time.RFC3339))
	}
	if p.cause == vocab.PauseOutage {
		what = fmt.Sprintf("an outage (%s): the next try would be at %s", p.reason, p.until.Format(time.RFC3339))
		again = "run runner-loop again once the provider answers"
	}
	return fmt.Sprintf("%s, %s from now: %ds paused already and [agent] max_pause = %s; %s",
		what, p.wait.Round(time.Second), int64(p.paused/time.Second), p.maxWait, again)
}

// recordPause records the pause in the record at path (status paused,
// the pause and its log entry), then runs on_pause.
func recordPause(env *cli.Env, path string, r runrecord.Record, lp lastPause, plan pausePlan, hooks config.Hooks, start time.Time) error {
	t := now()
	if r.Pause == nil {
		r.Pause = &runrecord.Pause{}
	}
	since, u := start.UTC().Truncate(time.Second), plan.until
	r.Status, r.UpdatedAt = runrecord.Paused, t
	r.Pause.Count++
	r.Pause.Since, r.Pause.Until, r.Pause.Reason, r.Pause.Cause = &since, &u, plan.reason, string(plan.cause)
	what := "hit a usage limit"
	if plan.cause == vocab.PauseOutage {
		what = "met an outage"
	}
	msg := fmt.Sprintf("iteration %d %s (%s): paused until %s", lp.meta.Iteration, what, plan.reason, plan.until.Format(time.RFC3339))
	if plan.capped != "" {
		msg += fmt.Sprintf(" (the reported reset %s lies beyond [agent] max_pause = %s: capped)", plan.capped, plan.maxWait)
	}
	r.AddLog(t, "pause", msg)
	// The record says paused before the hook runs (a hook may read
	// it), and again with the hook's failure, if any.
	if err := save(path, r); err != nil {
		return err
	}
	logged := len(r.Log)
	runHook(env, &r, "on_pause", hooks, "RUNNER_PAUSE_UNTIL="+plan.until.Format(time.RFC3339), "RUNNER_PAUSE_REASON="+string(plan.cause))
	if len(r.Log) != logged {
		return save(path, r)
	}
	return nil
}

// WaitCmd is `runner-record wait`.
type WaitCmd struct {
	Record string `placeholder:"ID" help:"The record id printed by runner-record begin: once the wait ends by itself the record is running again (its pause closed, or the answer logged); with --answer it is waiting meanwhile."`
	Until  string `placeholder:"TIME" help:"Wait until TIME (RFC 3339: runner-record pause's until=)."`
	Answer bool   `help:"Wait until an operator answers a waiting node (tree-edit answer queues the answer while the runner holds the lock)."`
}

// Validate takes one of --until and --answer.
func (w *WaitCmd) Validate() error {
	if (w.Until == "") == !w.Answer {
		return errors.New("give --until TIME or --answer, one of them")
	}
	if w.Until != "" {
		if _, err := time.Parse(time.RFC3339, w.Until); err != nil {
			return fmt.Errorf("--until %q is not an RFC 3339 time", w.Until)
		}
	}
	return nil
}

// Run waits, on events only: the time, an answer queued, the cancel file,
// SIGINT or SIGTERM.
func (w *WaitCmd) Run(env *cli.Env) error {
	in := cli.NotifyInterrupt()
	defer in.Stop()
	if err := in.WatchCancelFile(env.Abs(layout.Cancel)); err != nil {
		return exit.Errorf(exit.RunnerError, "watch %s: %v", layout.Cancel, err)
	}
	var ended <-chan struct{}
	if w.Answer {
		ch, stop, err := answerQueued(env.Abs(layout.Answers))
		if err != nil {
			return exit.Errorf(exit.RunnerError, "watch %s: %v", layout.Answers, err)
		}
		defer stop()
		ended = ch
		if err := w.mark(env); err != nil {
			return err
		}
	} else {
		until, _ := time.Parse(time.RFC3339, w.Until)
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		done := make(chan struct{})
		go func() {
			select {
			case <-t.C:
				close(done)
			case <-in.Done():
			}
		}()
		ended = done
	}
	start := time.Now()
	select {
	case <-ended:
	case <-in.Done():
	}
	if in.Err() != nil {
		fmt.Fprintf(env.Stdout, "interrupted reason=%s\n", in.Cause())
		return cli.Silent(in.Code())
	}
	return w.resume(env, time.Since(start))
}

// mark records that the runner waits for an answer.
func (w *WaitCmd) mark(env *cli.Env) error {
	if w.Record == "" {
		return nil
	}
	path, r, err := recordFlag{Record: w.Record}.load(env)
	if err != nil {
		return err
	}
	t := now()
	r.Status, r.UpdatedAt = runrecord.Waiting, t
	r.AddLog(t, "waiting", "every open leaf waits for an operator's answer: waiting for one (tree-edit answer)")
	return save(path, r)
}

// resume records the end of the wait and says it on stdout.
func (w *WaitCmd) resume(env *cli.Env, waited time.Duration) error {
	secs := int64(waited.Round(time.Second) / time.Second)
	if w.Record != "" {
		path, r, err := recordFlag{Record: w.Record}.load(env)
		if err != nil {
			return err
		}
		t := now()
		r.Status, r.UpdatedAt = runrecord.Running, t
		if w.Answer {
			r.AddLog(t, "answered", "an operator's answer is queued: the run goes on")
		} else {
			if r.Pause == nil {
				r.Pause = &runrecord.Pause{}
			}
			r.Pause.TotalSecs += secs
			r.Pause.Since, r.Pause.Until = nil, nil
			r.AddLog(t, "resume", fmt.Sprintf("the pause ended after %ds: a fresh session goes on", secs))
		}
		if err := save(path, r); err != nil {
			return err
		}
	}
	if w.Answer {
		fmt.Fprintln(env.Stdout, "answered")
	} else {
		fmt.Fprintf(env.Stdout, "resumed secs=%d\n", secs)
	}
	return nil
}

// answerQueued is closed once dir (.runner/answers) holds an entry: one
// there already, or one created later. stop ends the watch.
func answerQueued(dir string) (<-chan struct{}, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fsutil.Cause(err)
	}
	wt, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil, err
	}
	if err := wt.Add(dir); err != nil {
		wt.Close()
		return nil, nil, err
	}
	ch := make(chan struct{})
	quit := make(chan struct{})
	var once bool
	fire := func() {
		if !once {
			once = true
			close(ch)
		}
	}
	go func() {
		defer wt.Close()
		for {
			select {
			case ev, ok := <-wt.Events:
				if !ok {
					return
				}
				// A finished file, not the temporary one it is written as.
				if ev.Has(fsnotify.Create) && !strings.HasPrefix(filepath.Base(ev.Name), ".") {
					fire()
				}
			case _, ok := <-wt.Errors:
				if !ok {
					return
				}
			case <-quit:
				return
			}
		}
	}()
	// After the watch is in place, so an answer queued in between is seen.
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") {
				close(quit)
				return closedChan(), func() {}, nil
			}
		}
	}
	return ch, func() { close(quit) }, nil
}

// closedChan is a channel that is already closed.
func closedChan() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}
