package runrecord

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/textclean"
	"github.com/treeloop/treeloop/lib/tree"
)

// NowEnv, when set (RFC 3339), fixes the clock the records are stamped
// with, for reproducible records in tests.
const NowEnv = "RUNNER_RECORD_NOW"

// Now is the time a record is stamped with: NowEnv's, else the clock's,
// in UTC.
func Now() time.Time {
	if s := os.Getenv(NowEnv); s != "" {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t.UTC()
		}
	}
	return time.Now().UTC()
}

// Stop is what stops a running hook: a context done on SIGINT or SIGTERM
// (lib/cli's Interrupt) and the cause it names ("SIGINT", "SIGTERM").
type Stop interface {
	context.Context
	Cause() string
}

// Hooks runs a record's hooks (RunHook) in the repository Root: Stop ends
// a running one, Warnf says what failed.
type Hooks struct {
	Root  string
	Stop  Stop
	Warnf func(format string, args ...any)
}

// hookGrace is how long a hook past its timeout gets between SIGTERM and
// SIGKILL.
const hookGrace = 2 * time.Second

// Run runs the hook name of hooks (if configured) with r as JSON on stdin
// and RUNNER_* variables (extra: more KEY=VALUE), in h.Root, in a process
// group of its own (out of reach of a signal to the runner's group:
// h.Stop stops it), within hooks.timeout_secs. A failure, a hang, an
// interrupt or a hook that cannot start is logged in r (kinds
// hook_failed, hook_timeout, hook_interrupted) and warned about; it never
// fails the caller.
func (h Hooks) Run(r *Record, name string, hooks config.Hooks, extra ...string) {
	var argv []string
	for _, hk := range hooks.Named() {
		if hk.Name == name {
			argv = hk.Argv
		}
	}
	if len(argv) == 0 {
		return
	}
	shown := r.Readable()
	vars := []string{
		"RUNNER_EVENT=" + name,
		"RUNNER_RUN_ID=" + r.RunID,
		"RUNNER_RECORD=" + filepath.Join(h.Root, layout.RunRecord(r.ID)),
		"RUNNER_STATUS=" + r.Status,
		"RUNNER_REASON=" + shown.Reason,
		"RUNNER_ROOT=" + h.Root,
		"RUNNER_BRANCH=" + r.Branch,
		"RUNNER_ITERATIONS=" + strconv.Itoa(r.Iterations),
	}
	if li := r.LastIteration; li != nil {
		vars = append(vars, "RUNNER_ITERATION="+strconv.Itoa(li.Iter), "RUNNER_NODE_ID="+li.NodeID)
	}
	for _, kv := range extra {
		vars = append(vars, textclean.StripANSI(kv))
	}
	var out bytes.Buffer
	capped := proc.NewCappedWriter(&out, 4096)
	res, err := proc.Run(h.Stop, proc.Spec{
		Argv:     argv,
		Dir:      h.Root,
		Env:      hookEnv(git.Strip(os.Environ()), vars),
		Stdin:    bytes.NewReader(Encode(shown)),
		Log:      capped,
		Deadline: time.Now().Add(hooks.Timeout()),
		Grace:    hookGrace,
	})
	_ = capped.Close()
	var kind, msg string
	switch {
	case err != nil:
		kind, msg = "hook_failed", err.Error()
	case res.Canceled:
		kind, msg = "hook_interrupted", "stopped by "+h.Stop.Cause()
	case res.TimedOut:
		kind, msg = "hook_timeout", fmt.Sprintf("still running after %s (hooks.timeout_secs): stopped", hooks.Timeout())
	case res.ExitCode != 0:
		kind = "hook_failed"
		if res.Signal != "" {
			msg = "killed by signal " + res.Signal
		} else {
			msg = "exit " + strconv.Itoa(res.ExitCode)
		}
		if last := lastLine(out.String()); last != "" {
			msg += ": " + last
		}
	default:
		return
	}
	msg = name + " (" + argv[0] + "): " + msg
	r.AddLog(time.Now(), kind, msg)
	h.Warnf("hook %s; the run goes on", msg)
}

// Readable is r as a notification shows it: a copy whose text (the goal's
// title, the reason, the log's and the pause's messages, which may quote a
// guard's or an agent's output) has no terminal escapes (lib/textclean).
// The record itself keeps what was written.
func (r *Record) Readable() Record {
	c := *r
	c.GoalTitle, c.Reason = textclean.StripANSI(c.GoalTitle), textclean.StripANSI(c.Reason)
	if c.Log != nil {
		c.Log = make([]Entry, len(r.Log))
		for i, e := range r.Log {
			e.Message = textclean.StripANSI(e.Message)
			c.Log[i] = e
		}
	}
	if r.Pause != nil {
		p := *r.Pause
		p.Reason = textclean.StripANSI(p.Reason)
		c.Pause = &p
	}
	return c
}

// Iterated refreshes r after a committed iteration (counts, usage, last
// iteration, HEAD; Repo.Refresh), stamps it at t and runs on_iteration,
// then on_question when the iteration's agent asked the operator and the
// leaf waits for the answer. The caller saves r.
func (rp *Repo) Iterated(r *Record, t time.Time, h Hooks) error {
	if err := rp.Refresh(r, true); err != nil {
		return err
	}
	r.UpdatedAt = t
	h.Run(r, "on_iteration", rp.Config.Hooks)
	if li := r.LastIteration; li != nil && li.Status == tree.AgentBlocked {
		if n, _ := tree.Find(rp.Tree, li.NodeID); n != nil && n.IsWaiting() {
			h.Run(r, "on_question", rp.Config.Hooks, "RUNNER_QUESTION="+n.Waiting)
		}
	}
	return nil
}

// private are variables of the runner's own commands that a hook must
// not see: the step's facts (lib/git's StepVars), the loop's record and
// the trace clock.
var private = append([]string{"TREELOOP_RECORD", "RUNNER_TRACE_T0"}, git.StepVars...)

// hookEnv is a hook's environment: env without the runner's private
// variables and without any earlier value of the documented ones, then
// vars (the documented RUNNER_* of this event).
func hookEnv(env, vars []string) []string {
	drop := map[string]bool{}
	for _, n := range private {
		drop[n] = true
	}
	for _, kv := range vars {
		n, _, _ := strings.Cut(kv, "=")
		drop[n] = true
	}
	drop["RUNNER_ITERATION"], drop["RUNNER_NODE_ID"] = true, true // documented, set only with a last iteration
	out := make([]string, 0, len(env)+len(vars))
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); !drop[n] {
			out = append(out, kv)
		}
	}
	return append(out, vars...)
}

// lastLine is the last non-empty line of s, at most 200 bytes.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200]
	}
	return l
}
