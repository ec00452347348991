// Package stepend is the step-end command: the end of runner-step
// (tools/runner-step; seed 004, DESIGN.md decisions 12, 15, 20), from the
// exits of the iteration's session (agent-exec, guard-run) to its commit
// and the refresh of the run record. What the exits make of the iteration
// (verdict) is decided here, once; a runner error puts back what the
// session changed (agent-exec --restore, a command of its own) before
// anything is staged; then tree-update, iter-log end and loop-commit
// commit run in sequence in this process (their cores, cli.Call), and
// the run record is refreshed in this process too (lib/runrecord). A signal that
// comes meanwhile is held: the iteration is committed, and the step ends
// as interrupted.
package stepend

import (
	"io"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/stepctx"
	"github.com/treeloop/treeloop/lib/tree"
)

// Options is the command line of step-end.
type Options struct {
	stepctx.Base
	Iter      string `required:"" placeholder:"DIR" help:"The iteration's directory (step-begin's dir)."`
	Selected  string `placeholder:"ID" help:"The node the iteration worked on, checked against the one it began on (its begin.json, which the step takes the node from): a mismatch is a runner error and nothing is committed."`
	AgentExit *int   `name:"agent-exit" placeholder:"N" help:"agent-exec's exit code: 0 the session ended (judged by tree-update), 5 an agent error, 8 paused on a usage limit or an outage, 124 timed out, 130/143 interrupted, other a runner error. Without it no session ran: context-write failed (a runner error)."`
	AgentDone bool   `name:"agent-done" help:"agent-exec reported status=done: the guard decides (--guard-exit); without --guard-exit the guard did not start, after a signal or the operator's cancel, and the iteration is interrupted."`
	GuardExit *int   `name:"guard-exit" placeholder:"N" help:"guard-run's exit code: 0 pass, 1 fail, 124 timed out, 130/143 interrupted, other a runner error."`
	Seal      string `placeholder:"DIGEST" help:"The seal digest agent-exec or guard-run wrote on its --seal-fd: agent-exec --restore --sealed puts back what no session may change should either have failed."`
	Record    string `placeholder:"ID" help:"The run record to refresh once the iteration is committed (runner-record update; none without it)."`
	Detach    bool   `help:"The step runs alone and opened the record: when it goes on (exit 0, 5, 8) and no signal came, the refresh leaves the record running with no runner attached (runner-record update --detach)."`
	Signaled  int    `placeholder:"CODE" help:"A signal the step got already, 130 (SIGINT) or 143 (SIGTERM), as if it came now (0: none)."`
	DataFD    int    `name:"data-fd" default:"3" placeholder:"FD" help:"The descriptor the step's facts go to, as shell assignments for runner-step to eval: end_status and end_reason (for the run record), detach (1: the refresh left the record running with no runner), committed (the step's last line without \"step: \", once the iteration is committed), then exit=<code>."`
}

// Main runs step-end and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("step-end", "End an iteration of runner-step in the current directory, the repository's root: decide from the session's exits what the iteration was (the outcome and the guard's word tree-update takes), put back what a session that failed changed (agent-exec --restore), and commit the iteration (tree-update, iter-log end, loop-commit commit); then refresh the run record. Prints the step's last line (\"step: run=… iter=… node=… status=… guard=…\") and the step's facts on --data-fd. Exit: the step's exit code (runner-step --help): 0 committed, 5 committed as an agent error, 8 committed as paused, 124 timed out, 130/143 interrupted (a signal, or .runner/cancel), 6 runner error (committed as one, or not committed when the commit failed).", &Options{}, args, stdin, stdout, stderr)
}

// Run ends the iteration.
func (o *Options) Run(env *cli.Env) error {
	// The jobs of the step load tree.json each; the same document is
	// parsed once.
	tree.ShareLoads()
	s := &step{env: env, in: cli.NotifyInterrupt(), signaled: o.Signaled, facts: plumbing.Facts{"detach": ""}}
	defer s.in.Stop()
	code := s.end(o)
	s.facts["exit"] = itoa(code)
	if err := s.facts.Write(o.DataFD); err != nil {
		env.Warnf("%v", err)
	}
	if code != exit.OK {
		return cli.Silent(code)
	}
	return nil
}
