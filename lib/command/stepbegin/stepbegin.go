// Package stepbegin is the step-begin command: the start of runner-step
// (tools/runner-step; seed 004, DESIGN.md decisions 12, 15, 20), from the
// recovery of an iteration a crash left to the allocation of the next
// one. Every command of the start runs in this process through its typed
// core (cli.Call): iter-log recover (lib/iterdir Recover), runner-record
// begin (lib/runrecord Begin), loop-commit check, tree-validate,
// tree-select and runner-check (lib/runcheck). They read what the last
// step left (recover, when it finds nothing to recover, and begin write
// only ignored files), so they run side by side; each one's output is
// kept and taken in that order: the first that refuses ends the step as
// it would have in sequence, and what the later ones printed is not
// shown. Once tree-validate, tree-select and runner-check have passed,
// while loop-commit check's git status still scans the work tree, iter-log
// begin and context-write allocate the iteration ahead (they write only
// ignored files); should the check refuse, that directory, never started,
// is removed. A recovery puts back what a session changed with
// agent-exec --restore and queued answers are committed by tree-edit
// apply-answers, both processes of their own (docs/development.md).
package stepbegin

import (
	"fmt"
	"io"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/tree"
)

// Options is the command line of step-begin.
type Options struct {
	PID      int  `required:"" help:"The step's process id (runner-step's), for the run record the step opens when it runs alone, and the lock's holder line (--lock)."`
	Lock     bool `help:"First take the runner lock as runner-step, on descriptor 9 that runner-enter env opened on .runner/lock (as runner-enter lock does; shared when it holds the loop's lock already): exit 1 when another runner holds it."`
	Signaled int  `placeholder:"CODE" help:"A signal the step got already, 130 (SIGINT) or 143 (SIGTERM), as if it came now: the step starts no iteration (0: none)."`
	DataFD   int  `name:"data-fd" default:"3" placeholder:"FD" help:"The descriptor the step's facts go to, as shell assignments for runner-step to eval, whatever the exit code: lock (refused: another runner holds it, the step did not run), record, owned (1: the step opened the run record and ends it), run, base, branch, id, mode, dir, iter, context_failed (1: context-write failed), end_status and end_reason (for the run record), then exit=<code>."`
}

// Main runs step-begin and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("step-begin", "Begin an iteration of runner-step in the current directory, the repository's root: take the runner lock (--lock), commit an iteration a crash or kill left unfinished (as interrupted), commit the answers operators queued, open the run record (unless TREELOOP_RECORD is set: runner-loop owns it), check the git policy, the tree, the selection and what the iteration needs (loop-commit check, tree-validate --audit, tree-select, runner-check: side by side), and allocate the iteration (iter-log begin, context-write). Prints the step's lines as runner-step prints them (\"step: recovered …\", \"step: status=complete\", \"step: limit reason=…\", \"step: interrupted reason=…\") and the step's facts on --data-fd. Exit 0 an iteration is allocated, otherwise the step's exit code (runner-step --help): 1 refused (another runner holds the lock among others), 2 complete, 3 stuck, 4 a limit, 6 runner error, 7 waiting, 130/143 interrupted (a signal, or .runner/cancel) before an iteration began.", &Options{}, args, stdin, stdout, stderr)
}

// facts is what the step learns, for runner-step.
type facts = plumbing.Facts

// Run begins the iteration.
func (o *Options) Run(env *cli.Env) error {
	// The jobs of the step load tree.json each; the same document is
	// parsed once.
	tree.ShareLoads()
	s := newStep(env, o.PID)
	defer s.in.Stop()
	s.signaled = o.Signaled
	code := exit.OK
	if o.Lock {
		code = s.lock()
	}
	if code == exit.OK {
		code = s.begin()
	}
	s.waitAll()
	s.facts["exit"] = fmt.Sprint(code)
	if err := s.facts.Write(o.DataFD); err != nil {
		s.env.Warnf("%v", err)
	}
	if code != exit.OK {
		return cli.Silent(code)
	}
	return nil
}
