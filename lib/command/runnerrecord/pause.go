package runnerrecord

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/vocab"
)

// PauseCmd is `runner-record pause`.
type PauseCmd struct {
	Record string `placeholder:"ID" help:"The record id printed by runner-record begin; without it the pause is decided but recorded nowhere."`
	Paused int64  `placeholder:"SECS" help:"Seconds this runner has paused already (runner-loop adds them up), counted against [agent] max_pause."`
}

// lastPause is the run's last iteration, which a usage limit paused, and
// how many iterations in a row before it paused too.
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
		return lastPause{}, errors.New("the run's last iteration did not pause on a usage limit: nothing to wait for")
	}
	return lp, nil
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
	reset, reason := "", "a usage limit"
	if a := lp.meta.Agent; a != nil {
		reset = a.ResetAt
		if a.Message != "" {
			reason = a.Message
		}
	}
	start := time.Now()
	until := agent.PauseUntil(reset, lp.consecutive, start).UTC().Truncate(time.Second)
	wait := until.Sub(start)
	secs := int64(wait.Round(time.Second) / time.Second)
	max := cfg.Agent.MaxPause.Duration
	if max == 0 || time.Duration(p.Paused)*time.Second+wait > max {
		fmt.Fprintf(env.Stdout, "limit reason=max-pause until=%s\n", until.Format(time.RFC3339))
		return exit.Errorf(exit.Limit, "the usage limit lifts at %s, %s from now: %ds paused already and [agent] max_pause = %s; run runner-loop again after the reset", until.Format(time.RFC3339), wait.Round(time.Second), p.Paused, max)
	}
	if p.Record != "" {
		path, r, err := recordFlag{Record: p.Record}.load(env)
		if err != nil {
			return err
		}
		t := now()
		if r.Pause == nil {
			r.Pause = &runrecord.Pause{}
		}
		since, u := start.UTC().Truncate(time.Second), until
		r.Status, r.UpdatedAt = runrecord.Paused, t
		r.Pause.Count++
		r.Pause.Since, r.Pause.Until, r.Pause.Reason = &since, &u, oneLine(reason)
		r.AddLog(t, "pause", fmt.Sprintf("iteration %d hit a usage limit (%s): paused until %s", lp.meta.Iteration, oneLine(reason), until.Format(time.RFC3339)))
		// The record says paused before the hook runs (a hook may read
		// it), and again with the hook's failure, if any.
		if err := save(path, r); err != nil {
			return err
		}
		logged := len(r.Log)
		runHook(env, &r, "on_pause", cfg.Hooks, "RUNNER_PAUSE_UNTIL="+until.Format(time.RFC3339))
		if len(r.Log) != logged {
			if err := save(path, r); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(env.Stdout, "until=%s secs=%d\n", until.Format(time.RFC3339), secs)
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
