package runnerrecord

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/runrecord"
)

// hookGrace is how long a hook past its timeout gets between SIGTERM and
// SIGKILL.
const hookGrace = 2 * time.Second

// runHook runs the hook name of hooks (if configured) with r as JSON on
// stdin and RUNNER_* variables (extra: more KEY=VALUE), in the repository root, in a process group
// of its own, within hooks.timeout_secs. A failure, a hang, an interrupt
// or a hook that cannot start is logged in r (kinds hook_failed,
// hook_timeout, hook_interrupted) and warned about on stderr; it never
// fails the command.
func runHook(env *cli.Env, r *runrecord.Record, name string, hooks config.Hooks, extra ...string) {
	var argv []string
	for _, h := range hooks.Named() {
		if h.Name == name {
			argv = h.Argv
		}
	}
	if len(argv) == 0 {
		return
	}
	vars := []string{
		"RUNNER_EVENT=" + name,
		"RUNNER_RUN_ID=" + r.RunID,
		"RUNNER_RECORD=" + env.Abs(layout.RunRecord(r.ID)),
		"RUNNER_STATUS=" + r.Status,
		"RUNNER_REASON=" + r.Reason,
		"RUNNER_ROOT=" + env.Dir,
		"RUNNER_BRANCH=" + r.Branch,
		"RUNNER_ITERATIONS=" + strconv.Itoa(r.Iterations),
	}
	if li := r.LastIteration; li != nil {
		vars = append(vars, "RUNNER_ITERATION="+strconv.Itoa(li.Iter), "RUNNER_NODE_ID="+li.NodeID)
	}
	vars = append(vars, extra...)
	var out bytes.Buffer
	capped := proc.NewCappedWriter(&out, 4096)
	// SIGINT or SIGTERM stops the hook's process group too (it runs in a
	// group of its own, out of reach of a signal to the runner's group),
	// and the record is still written.
	in := cli.NotifyInterrupt()
	defer in.Stop()
	res, err := proc.Run(in, proc.Spec{
		Argv:     argv,
		Dir:      env.Dir,
		Env:      hookEnv(git.Strip(os.Environ()), vars),
		Stdin:    bytes.NewReader(runrecord.Encode(*r)),
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
		kind, msg = "hook_interrupted", "stopped by "+in.Cause()
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
	env.Warnf("hook %s; the run goes on", msg)
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
