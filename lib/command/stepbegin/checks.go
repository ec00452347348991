package stepbegin

import (
	"fmt"
	"io"
	"os"
	"strings"

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
				_, sel := s.sel.Peek()
				if id := plumbing.Fields(sel)["id"]; id != "" {
					s.ahead = plumbing.Spawn(func(stdout, stderr io.Writer) int { return allocate(id, stdout, stderr) })
					s.jobs = append(s.jobs, s.ahead)
				}
			}
		}
	}
	if code := s.interrupted(); code != exit.OK {
		return code
	}
	code, out := s.check.Collect(nil, s.env.Stderr)
	if code != exit.OK {
		s.discardAhead()
		return code
	}
	if code := s.commit(plumbing.Fields(out)); code != exit.OK {
		return code
	}
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
// from loop-commit check's answer (HEAD as git has it otherwise): the
// commands that judge a session read their references from it, never
// from files the agent or the guard can write.
func (s *step) commit(kv map[string]string) int {
	s.facts["run"] = kv["run"]
	base, branch := kv["head"], kv["branch"]
	if base == "" || branch == "" {
		var out strings.Builder
		if plumbing.Held(&out, s.env.Stderr, "git", "rev-parse", "--verify", "HEAD") != exit.OK {
			return exit.RunnerError
		}
		base, branch = strings.TrimRight(out.String(), "\n"), ""
	}
	s.facts["base"], s.facts["branch"] = base, branch
	if branch != "" {
		// The step's facts for the commands started from here on
		// (lib/git/step.go), as runner-step exports them.
		os.Setenv(git.StepBranch, branch)
		os.Setenv(git.StepHead, base)
	}
	return exit.OK
}

// selection takes tree-select's answer: the node and the mode, or the
// end of the run (complete, stuck, waiting).
func (s *step) selection() int {
	code, sel := s.sel.Collect(nil, s.env.Stderr)
	switch code {
	case exit.OK:
	case exit.Complete:
		if sel != "status=complete" {
			// The runtime's exit 2 (a crash), not tree-select's answer.
			fmt.Fprintf(s.env.Stderr, "runner-step: tree-select ended with exit 2 without saying status=complete (it crashed); the step stops as a runner error\n")
			return exit.RunnerError
		}
		fmt.Fprintln(s.env.Stdout, "step: status=complete")
		s.facts["end_reason"] = "the tree is complete"
		return code
	case exit.Stuck:
		fmt.Fprintln(s.env.Stdout, "step: "+sel)
		s.facts["end_reason"] = strings.TrimPrefix(sel, "status=stuck ")
		return code
	case exit.Waiting:
		fmt.Fprintln(s.env.Stdout, "step: "+sel)
		s.facts["end_reason"] = "every open leaf waits for an operator's answer (tree-edit answer)"
		return code
	default:
		return code
	}
	kv := plumbing.Fields(sel)
	s.facts["id"], s.facts["mode"] = kv["id"], kv["next"]
	return exit.OK
}

// needs takes runner-check's answer: what the iteration needs (the
// configuration, the agent's and the guard's executables, the cassette,
// the budgets) is checked before one is allocated, so a bad
// configuration costs no iteration.
func (s *step) needs() int {
	code, out := s.runnerCheck.Collect(nil, s.env.Stderr)
	if code == exit.OK {
		return code
	}
	s.discardAhead()
	if code != exit.Negative {
		return code
	}
	var problems []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasSuffix(l, ": ok") && !strings.Contains(l, ": skipped: ") {
			problems = append(problems, l)
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

// allocate is iter-log begin for node id, then context-write in the
// iteration's directory: it prints iter-log begin's line, and
// "context=failed" when context-write failed.
func allocate(id string, stdout, stderr io.Writer) int {
	var out strings.Builder
	code := plumbing.Held(&out, stderr, "iter-log", "begin", "--selected", id)
	line := strings.TrimRight(out.String(), "\n")
	fmt.Fprintln(stdout, line)
	if code != exit.OK {
		return code
	}
	if plumbing.Held(io.Discard, stderr, "context-write", "--iter", plumbing.Fields(line)["dir"]) != exit.OK {
		fmt.Fprintln(stdout, "context=failed")
	}
	return exit.OK
}

// allocate takes the iteration allocated ahead, or allocates it now.
func (s *step) allocate() int {
	if code := s.stopped(); code != exit.OK {
		return code
	}
	j := s.ahead
	if j == nil {
		id := s.facts["id"]
		j = plumbing.Spawn(func(stdout, stderr io.Writer) int { return allocate(id, stdout, stderr) })
	}
	code, begin := j.Collect(nil, s.env.Stderr)
	s.ahead = nil // taken: from here its directory is allocated's to remove
	if strings.Contains(begin, "context=failed") {
		s.facts["context_failed"] = "1"
	}
	if code == exit.Limit {
		if begin == "" {
			begin = "limit=max-iterations"
		}
		fmt.Fprintln(s.env.Stdout, "step: "+strings.Replace(begin, "limit=", "limit reason=", 1))
		s.facts["end_reason"] = strings.TrimPrefix(begin, "limit=")
		return code
	}
	if code != exit.OK {
		return code
	}
	kv := plumbing.Fields(begin)
	s.facts["dir"], s.facts["iter"] = kv["dir"], kv["iter"]
	s.allocated = kv["dir"]
	return exit.OK
}
