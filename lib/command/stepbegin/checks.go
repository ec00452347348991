package stepbegin

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/command/contextwrite"
	"github.com/treeloop/treeloop/lib/command/iterlog"
	"github.com/treeloop/treeloop/lib/command/loopcommit"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/runrecord"
)

// openRecord opens the run record when the step runs alone (runner-loop
// sets TREELOOP_RECORD: it owns the record), and refreshes it with an
// iteration the recovery committed. A record never stops the step.
func (s *step) openRecord() {
	record, underLoop := os.LookupEnv("TREELOOP_RECORD")
	if !underLoop {
		// runner-record begin, in process, as a job: whatever happens
		// to it (a panic too) leaves the step going.
		_, record = plumbing.Spawn(func(stdout, stderr io.Writer) int {
			id, err := runrecord.Begin(s.env.Dir, s.pid, func(w string) { fmt.Fprintf(stderr, "runner-record: warning: %s\n", w) })
			if err != nil {
				fmt.Fprintf(stderr, "runner-record: %v\n", err)
				return exit.RunnerError
			}
			fmt.Fprint(stdout, id)
			return exit.OK
		}).Collect(nil, s.env.Stderr)
		if record != "" {
			s.facts["owned"] = "1"
		}
	}
	s.facts["record"] = record
	if record != "" && s.facts["recovered"] == "1" {
		plumbing.Held(s.env.Stdout, s.env.Stderr, "runner-record", "update", "--record", record)
	}
}

// checks takes the first commands' answers in order, allocating the
// iteration ahead once tree-validate, tree-select and runner-check have
// passed and nothing asks the step to stop.
func (s *step) checks() int {
	s.openRecord()
	if code, _ := s.validate.Peek(); code == exit.OK {
		if code, _ := s.sel.Peek(); code == exit.OK {
			if code, _ := s.runnerCheck.Peek(); code == exit.OK && !s.canceled() && s.signal() == 0 {
				if n := s.sel.Value().Node; n != nil {
					s.ahead = s.allocation(n.ID)
				}
			}
		}
	}
	if code := s.interrupted(); code != exit.OK {
		return code
	}
	code, _ := s.check.Collect(nil, s.env.Stderr)
	if code != exit.OK {
		s.discardAhead()
		return code
	}
	s.commit(s.check.Value())
	if code, _ := s.validate.Collect(s.env.Stdout, s.env.Stderr); code != exit.OK {
		s.discardAhead()
		return code
	}
	if code := s.selection(); code != exit.OK {
		return code
	}
	return s.needs()
}

// canceled reports whether the cancel file stands.
func (s *step) canceled() bool {
	_, err := os.Stat(s.env.Abs(layout.Cancel))
	return err == nil
}

// commit takes the run, the branch and the commit the step starts from
// from loop-commit check: the commands that judge a session read their
// references from it, never from files the agent or the guard can
// write.
func (s *step) commit(c loopcommit.CheckResult) {
	s.facts["run"], s.facts["base"], s.facts["branch"] = c.RunID, c.Head, c.Branch
	// The step's facts for what runs from here on (lib/git/step.go), as
	// runner-step exports them.
	os.Setenv(git.StepBranch, c.Branch)
	os.Setenv(git.StepHead, c.Head)
}

// selection takes tree-select's answer: the node and the mode, or the
// end of the run (complete, stuck, waiting).
func (s *step) selection() int {
	code, _ := s.sel.Collect(nil, s.env.Stderr)
	sel := s.sel.Value()
	switch code {
	case exit.OK:
	case exit.Complete, exit.Stuck, exit.Waiting:
		if sel.Status == "" {
			// An exit code with no selection (a crash): a runner error,
			// never the end of the run.
			fmt.Fprintf(s.env.Stderr, "runner-step: tree-select ended with exit %d without a selection; the step stops as a runner error\n", code)
			return exit.RunnerError
		}
		fmt.Fprintln(s.env.Stdout, "step: "+sel.String())
		switch code {
		case exit.Complete:
			s.facts["end_reason"] = "the tree is complete"
		case exit.Stuck:
			s.facts["end_reason"] = strings.TrimPrefix(sel.String(), "status=stuck ")
		default:
			s.facts["end_reason"] = "every open leaf waits for an operator's answer (tree-edit answer)"
		}
		return code
	default:
		return code
	}
	s.facts["id"], s.facts["mode"] = sel.Node.ID, sel.Node.Next
	return exit.OK
}

// needs takes runner-check's answer: what the iteration needs (the
// configuration, the agent's and the guard's executables, the cassette,
// the budgets) is checked before one is allocated, so a bad
// configuration costs no iteration.
func (s *step) needs() int {
	code, _ := s.runnerCheck.Collect(nil, s.env.Stderr)
	if code == exit.OK {
		return code
	}
	s.discardAhead()
	if code != exit.Negative {
		return code
	}
	var problems []string
	for _, r := range s.runnerCheck.Value().Checks {
		for _, p := range r.Problems {
			problems = append(problems, r.Name+": "+p)
		}
	}
	if len(problems) == 0 {
		problems = []string{""}
	}
	more := ""
	if n := len(problems); n > 1 {
		more = fmt.Sprintf(" (and %d more: run runner-check)", n-1)
	}
	fmt.Fprintf(s.env.Stderr, "runner-step: not starting an iteration: %s%s\n", problems[0], more)
	return code
}

// allocation is an iteration iter-log begin allocated (or the limit it
// reached), and whether context-write failed in it.
type allocation struct {
	Began         iterlog.Began
	ContextFailed bool
}

// allocation starts iter-log begin for node id, then context-write in the
// iteration's directory, in this process in the background: a job of the
// step.
func (s *step) allocation(id string) *plumbing.Typed[allocation] {
	j := plumbing.Go("iter-log begin", s.env, func(env *cli.Env) (allocation, error) {
		began, err := (&iterlog.BeginCmd{Selected: id}).Begin(env)
		if err != nil {
			return allocation{Began: began}, err
		}
		write := &contextwrite.Options{Iter: began.Dir}
		// context-write says its own errors; the session is then not run.
		failed := cli.Call("context-write", &cli.Env{Stdin: env.Stdin, Stdout: io.Discard, Stderr: env.Stderr, Dir: env.Dir}, write.Run) != exit.OK
		return allocation{Began: began, ContextFailed: failed}, nil
	})
	s.track(j.Job)
	return j
}

// allocate takes the iteration allocated ahead, or allocates it now.
func (s *step) allocate() int {
	if code := s.stopped(); code != exit.OK {
		return code
	}
	j := s.ahead
	if j == nil {
		j = s.allocation(s.facts["id"])
	}
	code, _ := j.Collect(nil, s.env.Stderr)
	a := j.Value()
	s.ahead = nil // taken: from here its directory is allocated's to remove
	if a.ContextFailed {
		s.facts["context_failed"] = "1"
	}
	if code == exit.Limit {
		limit := a.Began.Limit
		if limit == "" {
			limit = "max-iterations"
		}
		fmt.Fprintln(s.env.Stdout, "step: limit reason="+limit)
		s.facts["end_reason"] = limit
		return code
	}
	if code != exit.OK {
		return code
	}
	s.facts["dir"], s.facts["iter"] = a.Began.Dir, fmt.Sprint(a.Began.Iter)
	s.allocated = a.Began.Dir
	return exit.OK
}
