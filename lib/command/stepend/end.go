package stepend

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/iterlog"
	"github.com/treeloop/treeloop/lib/command/loopcommit"
	"github.com/treeloop/treeloop/lib/command/treeupdate"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// The outcomes tree-update takes (tree-update --help).
const (
	outcomeAgent       = "agent"
	outcomeTimeout     = string(vocab.ResultTimeout)
	outcomeInterrupted = string(vocab.ResultInterrupted)
	outcomeRunnerError = string(vocab.ResultRunnerError)
	outcomePaused      = string(vocab.ResultPaused)
)

// runnerErrorLog is the iteration's log of runner errors, one reason a
// line.
const runnerErrorLog = "runner_error.log"

// step is the end of one runner-step.
type step struct {
	env      *cli.Env
	in       *cli.Interrupt
	signaled int // a signal the step got before it started (--signaled)
	facts    plumbing.Facts
}

// signal is 130 or 143 once a signal came (before the start, or since),
// else 0.
func (s *step) signal() int {
	if c := s.in.Code(); c != 0 {
		return c
	}
	return s.signaled
}

// verdict is what the session's exits make of the iteration: the outcome
// and the guard's word tree-update takes, the step's exit so far, and the
// runner error to log ("" for none).
type verdict struct {
	outcome, guard string
	final          int
	runnerError    string
}

// judge reads the session's exits (nil: the command did not run):
// agent-exec's, whether it reported status=done, and guard-run's, which
// runs on status=done alone. signal is the signal the step got (0 none).
func judge(agentExit *int, agentDone bool, guardExit *int, signal int) verdict {
	v := verdict{outcome: outcomeAgent, guard: string(vocab.GuardSkipped)}
	if agentExit == nil {
		v.runnerError = "context-write failed"
		return v
	}
	switch rc := *agentExit; rc {
	case exit.OK:
	case exit.AgentError:
		v.final = rc
	case exit.Paused:
		v.outcome, v.final = outcomePaused, rc
	case exit.Timeout:
		v.outcome, v.final = outcomeTimeout, rc
	case exit.SIGINT, exit.SIGTERM:
		v.outcome, v.final = outcomeInterrupted, rc
	default:
		v.runnerError = fmt.Sprintf("agent-exec failed (exit %d)", rc)
	}
	if *agentExit != exit.OK || !agentDone {
		return v
	}
	if guardExit == nil {
		// No guard starts after a signal or the operator's cancel: the
		// iteration is interrupted, as in the guard.
		v.outcome, v.final = outcomeInterrupted, exit.SIGINT
		if signal != 0 {
			v.final = signal
		}
		return v
	}
	switch rc := *guardExit; rc {
	case exit.OK:
		v.guard = string(vocab.GuardPass)
	case 1:
		v.guard = string(vocab.GuardFail)
	case exit.Timeout:
		v.outcome, v.final = outcomeTimeout, rc
	case exit.SIGINT, exit.SIGTERM:
		v.outcome, v.final = outcomeInterrupted, rc
	default:
		v.runnerError = fmt.Sprintf("guard-run failed (exit %d)", rc)
	}
	return v
}

// end ends the iteration and returns the step's exit code.
func (s *step) end(o *Options) int {
	v := judge(o.AgentExit, o.AgentDone, o.GuardExit, s.signal())
	if v.runnerError != "" {
		if code := s.restore(o, v.runnerError); code != exit.OK {
			return code
		}
		v.outcome, v.final = outcomeRunnerError, exit.RunnerError
	}
	line, code := s.commit(o, &v)
	if code != exit.OK {
		return code
	}
	// Run alone, a step that goes on to the next one (0, 5, 8) leaves the
	// record running without a runner in the refresh's write.
	detach := o.Detach && s.signal() == 0 && goesOn(v.final)
	if o.Record != "" && !s.refresh(o.Record, detach) {
		detach = false
	}
	if detach {
		s.facts["detach"] = "1"
	}
	fmt.Fprintln(s.env.Stdout, "step: "+line)
	s.facts["committed"] = line
	return s.finish(v.final, line)
}

// goesOn reports whether a step that ends with code lets the run go on
// with the next step: an iteration committed, as an agent error or
// paused.
func goesOn(code int) bool {
	return code == exit.OK || code == exit.AgentError || code == exit.Paused
}

// finish is the step's exit code: a signal ends the step as interrupted,
// after whatever iteration it committed; it sets the run record's
// end_status and end_reason for runner-record end.
func (s *step) finish(final int, line string) int {
	sig := s.signal()
	if sig != 0 && (final == exit.OK || final == exit.AgentError || final == exit.SIGINT || final == exit.SIGTERM) {
		final = sig
	}
	word := "SIGINT"
	if sig == exit.SIGTERM {
		word = "SIGTERM"
	}
	switch final {
	case exit.Timeout:
		s.facts["end_reason"] = "the iteration timed out: " + line
	case exit.SIGINT, exit.SIGTERM:
		if sig != 0 {
			s.facts["end_reason"] = "interrupted by " + word + ": " + line
		} else {
			s.facts["end_status"] = "canceled"
			s.facts["end_reason"] = "canceled by .runner/cancel: " + line
			// Used up by the runner it stopped: runner-loop, or this
			// step when it runs alone.
			if _, underLoop := os.LookupEnv("TREELOOP_RECORD"); !underLoop {
				cancel.Stopped(s.env.Dir, "runner-step", s.env.Stderr)
			}
		}
	}
	return final
}

// restore logs a runner error in the iteration's runner_error.log, and
// when agent-exec or guard-run ended without checking its session
// (killed, by the agent itself among others) puts back what no session
// may change, as after a crash, before anything is staged (agent-exec
// --restore). A runner error consumes no attempt: tree-update puts the
// tree back to its snapshot.
func (s *step) restore(o *Options, reason string) int {
	s.log(o.Iter, reason+"\n")
	if !strings.HasPrefix(reason, "agent-exec") && !strings.HasPrefix(reason, "guard-run") {
		return exit.OK
	}
	argv := []string{"agent-exec", "--iter", o.Iter, "--base", o.Base.Base, "--restore"}
	if o.Seal != "" {
		argv = append(argv, "--sealed", o.Seal)
	}
	var out bytes.Buffer
	code := plumbing.Held(&out, &out, argv...)
	if text := strings.TrimRight(out.String(), "\n"); text != "" {
		s.log(o.Iter, text+"\n")
		fmt.Fprintln(s.env.Stderr, text)
	}
	if code != exit.OK {
		fmt.Fprintf(s.env.Stderr, "runner-step: cannot put back what the session changed; the iteration in %s is not committed (the next runner-step recovers it)\n", o.Iter)
		return exit.RunnerError
	}
	return exit.OK
}

// log appends text to the iteration's runner_error.log.
func (s *step) log(dir, text string) {
	f, err := os.OpenFile(filepath.Join(s.env.Abs(dir), runnerErrorLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		s.env.Warnf("log the runner error in %s: %v", dir, err)
	}
}

// commit records the iteration (tree-update), writes its log and stages
// every change (iter-log end, the step's one staging of the work tree)
// and commits that index (loop-commit commit --as-staged: nothing ran
// since), each in this process (cli.Call). The node is the one the
// iteration began on (begin.json, sealed while the session ran). It
// returns iter-log end's line, or the exit code of a commit that failed
// (the iteration is left for the next step's recovery).
func (s *step) commit(o *Options, v *verdict) (string, int) {
	node, err := beganOn(s.env.Abs(o.Iter), o.Selected)
	if err != nil {
		fmt.Fprintf(s.env.Stderr, "runner-step: %v; the iteration in %s is not committed\n", err, o.Iter)
		return "", exit.RunnerError
	}
	update := updateOptions(o, node, v)
	code := s.call("tree-update", func(env *cli.Env) error { _, err := update.Update(env); return err })
	switch {
	case code == exit.AgentError && v.final == exit.OK:
		v.final = exit.AgentError
	case code != exit.OK && code != exit.AgentError:
		fmt.Fprintf(s.env.Stderr, "runner-step: tree-update failed (exit %d); the iteration in %s is not committed\n", code, o.Iter)
		return "", exit.RunnerError
	}
	var m iterdir.Meta
	end := &iterlog.EndCmd{Iter: o.Iter}
	if s.call("iter-log end", func(env *cli.Env) (err error) { m, err = end.End(env); return err }) != exit.OK {
		fmt.Fprintf(s.env.Stderr, "runner-step: iter-log end failed; the iteration in %s is not committed\n", o.Iter)
		return "", exit.RunnerError
	}
	commit := &loopcommit.CommitCmd{Iter: o.Iter, AsStaged: true}
	if s.call("loop-commit commit", func(env *cli.Env) error { _, err := commit.Commit(env); return err }) != exit.OK {
		fmt.Fprintf(s.env.Stderr, "runner-step: loop-commit failed for %s\n", o.Iter)
		return "", exit.RunnerError
	}
	return iterlog.Line(m), exit.OK
}

// updateOptions is tree-update's command line for the iteration: tree-update
// --iter DIR --base COMMIT --selected NODE --guard G --outcome O, with
// the defaults of the others (--tree .runner/state/tree.json).
func updateOptions(o *Options, node string, v *verdict) *treeupdate.Options {
	return &treeupdate.Options{Base: o.Base, Iter: o.Iter, Tree: layout.Tree, Selected: node, Guard: v.guard, Outcome: v.outcome}
}

// beganOn is the node the iteration in dir began on (its begin.json); a
// selected that is not it (step-end --selected) is refused.
func beganOn(dir, selected string) (string, error) {
	var b iterdir.Begin
	if err := iterdir.Read(dir, iterdir.BeginFile, &b); err != nil {
		return "", fmt.Errorf("read %s: %w", iterdir.BeginFile, err)
	}
	if b.NodeID == "" || !tree.ValidID(b.NodeID) {
		return "", fmt.Errorf("%s names no node (%q)", iterdir.BeginFile, b.NodeID)
	}
	if selected != "" && selected != b.NodeID {
		return "", fmt.Errorf("--selected %s, but the iteration began on node %s", selected, b.NodeID)
	}
	return b.NodeID, nil
}

// call runs a command's core in this process, what it prints on stdout
// dropped (the step says what it did) and its errors on the step's
// stderr (cli.Call): its exit code.
func (s *step) call(name string, core func(*cli.Env) error) int {
	e := *s.env
	e.Stdout = io.Discard
	return cli.Call(name, &e, core)
}

// refresh refreshes the run record id after the commit (runner-record
// update, in this process: its hooks stop on the step's signal), with
// detach leaving it without a runner. It reports whether the record was
// written; what failed is said as runner-record says it.
func (s *step) refresh(id string, detach bool) bool {
	warnf := func(format string, args ...any) {
		fmt.Fprintf(s.env.Stderr, "runner-record: warning: %s\n", fmt.Sprintf(format, args...))
	}
	err := fmt.Errorf("--record %q is not a record id", id)
	if tree.ValidID(id) {
		err = runrecord.Update(s.env.Dir, id, runrecord.Hooks{Root: s.env.Dir, Stop: s.in, Warnf: warnf}, detach)
	}
	if err != nil {
		fmt.Fprintf(s.env.Stderr, "runner-record: %v\n", err)
		return false
	}
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }
