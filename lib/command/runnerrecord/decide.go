package runnerrecord

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plumbing"
)

// DecideCmd is `runner-record decide`: runner-loop's decision table.
type DecideCmd struct {
	Exit      int    `required:"" placeholder:"N" help:"runner-step's exit code (or 130/143: a pause or a wait for answers was interrupted, or a signal came before a step)."`
	Out       string `placeholder:"LINE" help:"The step's last line other than its begin, recovered, committed-iteration and exit lines (step: complete, stuck, waiting, a limit)."`
	Committed string `placeholder:"LINE" help:"The step's line of its last committed iteration (step: run=… iter=… node=… status=… guard=…), empty when none."`
	Steps     int    `placeholder:"N" help:"The steps the loop has committed so far."`
	NoPause   bool   `name:"no-pause" help:"runner-loop --no-pause: a usage limit or an outage stops the loop (exit 8) instead of pausing it."`
	Wait      bool   `help:"runner-loop --wait: when every open leaf waits for an answer, the loop waits for one instead of stopping."`
	Signaled  int    `placeholder:"CODE" help:"A signal the loop got, 130 (SIGINT) or 143 (SIGTERM); 0 none. It stops a loop whose step went on (0, 5, 7, 8), and wins over .runner/cancel."`
	DataFD    int    `name:"data-fd" default:"3" placeholder:"FD" help:"The descriptor the decision goes to, as shell assignments for runner-loop to eval: action (continue, pause, await or stop), line (the loop's line to print, empty for none), end_reason and end_status (for runner-record end), cancel (1: .runner/cancel stopped the loop and is to be used up), then exit=<code> (runner-loop's exit code, with stop)."`
}

// The actions a decision gives runner-loop.
const (
	actContinue = "continue" // run the next step
	actPause    = "pause"    // a usage limit or an outage: pause the run (runner-record pause)
	actAwait    = "await"    // every open leaf waits: wait for an answer (runner-record wait --answer)
	actStop     = "stop"     // print the line and exit with the code
)

// decideInput is what runner-loop knows once a step ended.
type decideInput struct {
	code      int    // the step's exit code
	out       string // the step's last other line
	committed string // the step's last committed line
	steps     int
	noPause   bool
	wait      bool
	signaled  int  // 130, 143 or 0
	canceled  bool // .runner/cancel exists
	// summary is the meta.json summary of iteration n of run, false when
	// it cannot be read.
	summary func(run string, n int) (string, bool)
}

// Run decides and writes the decision on --data-fd.
func (d *DecideCmd) Run(env *cli.Env) error {
	in := decideInput{code: d.Exit, out: d.Out, committed: d.Committed, steps: d.Steps, noPause: d.NoPause, wait: d.Wait,
		signaled: d.Signaled, canceled: iterdir.Exists(env.Dir, layout.Cancel),
		summary: func(run string, n int) (string, bool) { return iterSummary(env, run, n) }}
	return decide(in).Write(d.DataFD)
}

// decide is runner-loop's decision table: what the step's exit code (after
// a signal, the signal's code) makes of the loop, the line runner-loop
// prints and the run record's reason.
func decide(in decideInput) plumbing.Facts {
	rc := in.code
	if in.signaled != 0 && (rc == 0 || rc == 5 || rc == 7 || rc == 8) {
		rc = in.signaled
	}
	f := plumbing.Facts{"action": actStop, "line": "", "end_reason": "", "end_status": "", "cancel": "", "exit": strconv.Itoa(rc)}
	stop := func(line, reason string) plumbing.Facts {
		f["line"], f["end_reason"] = line, reason
		return f
	}
	goOn := func(action, line string) plumbing.Facts {
		f["action"], f["line"], f["exit"] = action, line, ""
		return f
	}
	steps := "steps=" + strconv.Itoa(in.steps)
	said := stepsSaid(in.steps)
	out := strings.TrimPrefix(in.out, "step: ")
	switch rc {
	case 0, 5:
		return goOn(actContinue, "")
	case 2:
		f["exit"] = "0"
		return stop("loop: complete "+steps, "the tree is complete after "+said)
	case 3:
		return stop("loop: stuck "+out, strings.TrimPrefix(in.out, "step: status=stuck "))
	case 7:
		if in.wait {
			return goOn(actAwait, "loop: waiting "+out)
		}
		return stop("loop: waiting "+out, "every open leaf waits for an operator's answer (tree-edit answer, then runner-loop)")
	case 8:
		if !in.noPause {
			return goOn(actPause, "")
		}
		return stop("loop: paused "+steps, "a usage limit or an outage ended the session (runner-loop --no-pause): runner-loop again after its reset")
	case 4:
		reason := limitReason(in.out)
		return stop("loop: limit reason="+reason+" "+steps, reason)
	case 124:
		return stop("loop: timeout "+steps, "the iteration timed out: "+out)
	case 130, 143:
		return stopped(f, in, rc)
	}
	reason := "runner-step failed with exit " + strconv.Itoa(rc) + " after " + said
	if r, ok := runnerErrorReason(in); ok {
		reason = r
	}
	return stop("loop: error exit="+strconv.Itoa(rc)+" "+steps, reason)
}

// stopped is the decision of a loop stopped by the cancel file or a signal
// (exit rc; the signal's code when one came). The signal, when one came,
// wins over the cancel file.
func stopped(f plumbing.Facts, in decideInput, rc int) plumbing.Facts {
	steps := " steps=" + strconv.Itoa(in.steps)
	if in.signaled == 0 && in.canceled {
		f["line"] = "loop: interrupted reason=cancel-file" + steps
		f["cancel"], f["end_status"] = "1", "canceled"
		f["end_reason"] = "canceled by .runner/cancel after " + stepsSaid(in.steps)
		return f
	}
	if in.signaled != 0 {
		rc = in.signaled
	}
	word := "SIGINT"
	if rc == 143 {
		word = "SIGTERM"
	}
	f["exit"] = strconv.Itoa(rc)
	f["line"] = "loop: interrupted reason=" + word + steps
	f["end_reason"] = "interrupted by " + word + " after " + stepsSaid(in.steps)
	return f
}

// stepsSaid is "1 step", "2 steps".
func stepsSaid(n int) string {
	if n == 1 {
		return "1 step"
	}
	return strconv.Itoa(n) + " steps"
}

// limitReason is the reason of the step's "limit reason=<r>" line (its
// last one, up to white space), max-iterations when it gave none.
func limitReason(out string) string {
	i := strings.LastIndex(out, "limit reason=")
	if i < 0 {
		return "max-iterations"
	}
	r := out[i+len("limit reason="):]
	if j := strings.IndexAny(r, " \t\n\v\f\r"); j >= 0 {
		r = r[:j]
	}
	return r
}

// runnerErrorReason: a step that committed its iteration as a runner error
// gives the record's reason what it was, "iteration <n>: <summary>" (the
// iteration's meta.json), not only the step's exit code.
func runnerErrorReason(in decideInput) (string, bool) {
	if !strings.Contains(in.committed, " status=runner_error ") {
		return "", false
	}
	it := lineField(in.committed, "iter")
	n, err := strconv.Atoi(it)
	if err != nil || in.summary == nil {
		return "", false
	}
	s, ok := in.summary(lineField(in.committed, "run"), n)
	if !ok {
		return "", false
	}
	return "iteration " + it + ": " + s, true
}

// lineField is the value of " key=" (or "key=" after "step: ") in a step's
// line, up to the next space.
func lineField(line, key string) string {
	_, v, ok := strings.Cut(" "+strings.TrimPrefix(line, "step: "), " "+key+"=")
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, " ")
	return v
}

// iterSummary reads the summary of iteration n of run from its meta.json.
func iterSummary(env *cli.Env, run string, n int) (string, bool) {
	if run == "" || !filepath.IsLocal(run) || strings.ContainsAny(run, `/\`) {
		return "", false
	}
	var m iterdir.Meta
	if err := iterdir.Read(env.Abs(filepath.Join(layout.Iterations, run, layout.IterName(n))), iterdir.MetaFile, &m); err != nil {
		return "", false
	}
	return strings.TrimRight(m.Summary, "\n"), true
}
