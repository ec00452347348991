// Package runnerstatus is the runner-status command: where the
// current run stands, on one screen or as JSON (schemas/runner_status.v1),
// and with --runs every run of the repository from its run records. Exit
// codes follow tree-select: 0 an open leaf remains, 2 complete, 3 stuck,
// 7 waiting.
package runnerstatus

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/answer"
	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/guard"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/provenance"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/runstate"
	_ "github.com/treeloop/treeloop/lib/schema/full" // runner-status words the schema problems of a run record it cannot read
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
	"github.com/treeloop/treeloop/lib/worktree"
)

// Options is the command line of runner-status.
type Options struct {
	cli.Chdir
	JSON bool `name:"json" help:"Print the status as JSON (schemas/runner_status.v1.schema.json; with --runs, {\"version\": 1, \"runs\": [run records, each with its \"worktree\", '' for this checkout]})."`
	cli.Get
	Runs bool `name:"runs" help:"List every run of the repository instead of the current run: the records of .runner/runs/, oldest first, then those of each run worktree (runner-start --worktree)."`
	Last int  `name:"last" default:"5" help:"How many of the last iterations to show."`
}

// Main runs runner-status and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-status", "Show where the current run stands: run, status, iteration n/max, the node being worked, tree counts, the open questions, a pause and its end, the last iterations with what each pass stands on (witnessed, suite only, exit status only) and the last pass's tests by name, usage against budgets, and the next step when stuck, waiting, paused or limited. Exit as tree-select: 0 an open leaf remains, 2 complete, 3 stuck, 7 waiting; 1 when the state cannot be read.", &Options{}, args, stdin, stdout, stderr)
}

// Status is the --json output (schemas/runner_status.v1.schema.json).
type Status struct {
	Version     int               `json:"version"`
	RunID       string            `json:"run_id"`
	Branch      string            `json:"branch"`
	Record      *string           `json:"record"` // the run record's id, null when the run has none
	Status      string            `json:"status"` // the record's status; "none" without a record
	Reason      string            `json:"reason"`
	Runner      *runrecord.Runner `json:"runner"` // the runner of a running record; pid 0: between steps
	StartedAt   *time.Time        `json:"started_at"`
	ElapsedSecs int64             `json:"elapsed_secs"`
	Iteration   Iteration         `json:"iteration"`
	Selection   Selection         `json:"selection"`
	Nodes       runrecord.Nodes   `json:"nodes"`
	Usage       runrecord.Usage   `json:"usage"`
	Budgets     runrecord.Budgets `json:"budgets"`
	Recent      []iterdir.Row     `json:"recent"`
	Log         []runrecord.Entry `json:"log"`
	NextStep    string            `json:"next_step"`
	Head        *string           `json:"head"`
	// Baseline is the guard's outcome when the run started
	// (pass, fail, error; "" when runner-start ran none): a red start is
	// not the first node's doing.
	Baseline string `json:"baseline"`
	// Running is the iteration in progress while a runner holds the lock,
	// null otherwise.
	Running *iterdir.Running `json:"running"`
	// Cancel is the pending cancel request (.runner/cancel), null when
	// there is none: the run stops before its next iteration.
	Cancel *cancel.Pending `json:"cancel"`
	// unfinished is the last iteration when no runner works on it and it
	// has no meta.json: the next runner-step recovers it.
	unfinished int
	// live: a runner holds .runner/lock (a loop, between its steps too).
	live bool
	// Unbacked are the passed nodes the run's history does not back
	// (lib/provenance): counted as open here, and runner-step refuses to
	// go on until each is reopened.
	Unbacked []provenance.Unbacked `json:"unbacked"`
	// Questions are the open questions: the leaves that wait for an
	// operator's answer, in selection order.
	Questions []answer.Open `json:"questions"`
	// QueuedAnswers counts the answers queued in .runner/answers/ that the
	// runner commits before its next iteration.
	QueuedAnswers int `json:"queued_answers"`
	// Pause is the record's pauses on usage limits and outages (the
	// current one while the status is paused); null when the run has not
	// paused.
	Pause *runrecord.Pause `json:"pause"`
	// StuckLeaves are the open leaves with no attempts left, in selection
	// order: under stuck_policy skip, the leaves the run passes over.
	StuckLeaves []runrecord.StuckLeaf `json:"stuck_leaves"`
	// policy is the configuration's stuck_policy.
	policy tree.StuckPolicy
}

// Iteration is the run's iteration count against max_iterations.
type Iteration struct {
	Last int `json:"last"` // the last iteration allocated, 0 before the first
	Max  int `json:"max"`
}

// Selection is tree-select's answer on the current tree.
type Selection struct {
	Status      string `json:"status"` // open, complete, stuck, waiting
	ID          string `json:"id"`
	Path        string `json:"path"`
	Mode        string `json:"mode"`
	Title       string `json:"title"`
	Attempts    int    `json:"attempts"`
	MaxAttempts int    `json:"max_attempts"`
}

// Run executes the command.
func (o *Options) Run(env *cli.Env) error {
	if o.Runs {
		return o.runs(env)
	}
	st, err := Read(env.Dir, o.Last, time.Now(), env.Warnf)
	if err != nil {
		return err
	}
	if o.JSON || o.Wanted() {
		if err := o.PrintJSON(env, st); err != nil {
			return err
		}
	} else {
		printText(env.Stdout, st)
	}
	switch st.Selection.Status {
	case tree.StatusComplete:
		return cli.Silent(exit.Complete)
	case tree.StatusStuck:
		return cli.Silent(exit.Stuck)
	case tree.StatusWaiting:
		return cli.Silent(exit.Waiting)
	}
	return nil
}

// Read gathers the status of the repository at root, with the last n
// iterations, as of now; warn hears of each run record it could not read
// (the status goes on without it).
func Read(root string, n int, now time.Time, warn func(format string, args ...any)) (Status, error) {
	rp, err := readRepo(root)
	if err != nil {
		return Status{}, exit.Errorf(exit.Negative, "%v", err)
	}
	runID := runstate.Val(rp.State.RunID)
	st := Status{Version: 1, RunID: runID, Status: "none", Recent: []iterdir.Row{}, Log: []runrecord.Entry{}}
	if runID != "" {
		st.Branch = layout.BranchPrefix + runID
	}
	st.Iteration = Iteration{Last: rp.State.NextIter - 1, Max: rp.Config.MaxIterations}
	// A pass the run's history does not back does not count.
	if st.Unbacked, err = unbacked(rp); err != nil {
		return Status{}, err
	}
	t := provenance.Discount(rp.Tree, st.Unbacked)
	st.policy = tree.StuckPolicy(rp.Config.StuckPolicy)
	sel := tree.SelectWith(t, st.policy)
	st.Selection.Status = sel.Status
	if sel.Node != nil {
		st.Selection = Selection{Status: sel.Status, ID: sel.Node.ID, Path: sel.Path, Mode: sel.Node.Next, Title: sel.Node.Title, Attempts: sel.Node.Attempts, MaxAttempts: sel.Node.MaxAttempts}
	}
	st.Nodes = runrecord.CountNodes(t)
	if st.StuckLeaves = runrecord.StuckLeaves(t); st.StuckLeaves == nil {
		st.StuckLeaves = []runrecord.StuckLeaf{}
	}
	st.Questions = answer.Questions(t)
	queued, _ := answer.Pending(root)
	st.QueuedAnswers = len(queued)
	if st.Usage, err = rp.Usage(); err != nil {
		return Status{}, exit.Errorf(exit.Negative, "sum the run's usage: %v", err)
	}
	st.Budgets = rp.Budgets()
	if runID != "" {
		if st.Recent, err = iterdir.HistoryTail(filepath.Join(root, layout.Iterations, runID), st.Iteration.Last, n); err != nil {
			return Status{}, exit.Errorf(exit.Negative, "read the iterations: %v", fsutil.Cause(err))
		}
		if st.Recent == nil {
			st.Recent = []iterdir.Row{}
		}
	}
	if rec, ok := latest(root, runID, warn); ok {
		id := rec.ID
		st.Record, st.Status, st.Reason, st.Head = &id, rec.Status, rec.Reason, rec.Head
		st.StartedAt = &rec.StartedAt
		end := now
		if rec.FinishedAt != nil {
			end = *rec.FinishedAt
		}
		st.ElapsedSecs = int64(end.Sub(rec.StartedAt).Seconds())
		if !runrecord.Finished(rec) {
			rn := rec.Runner
			st.Runner = &rn
		}
		st.Log = rec.Log
		st.Pause = rec.Pause
	}
	if runID != "" {
		if b, ok, err := guard.ReadBaseline(root, runID); err == nil && ok {
			st.Baseline = b.Outcome
		}
	}
	if err := current(root, runID, &st); err != nil {
		return Status{}, err
	}
	st.NextStep = nextStep(st)
	return st, nil
}

// current fills in what happens now: the iteration in progress (or left
// unfinished) and a pending cancel request.
func current(root, runID string, st *Status) error {
	var err error
	if st.Cancel, err = cancel.Read(root); err != nil {
		return exit.Errorf(exit.Negative, "read %s: %v", layout.Cancel, err)
	}
	st.live = worktree.Locked(filepath.Join(root, layout.Lock))
	if runID == "" {
		return nil
	}
	last, err := iterdir.LastFrom(filepath.Join(root, layout.Iterations, runID), st.Iteration.Last)
	if err != nil {
		return exit.Errorf(exit.Negative, "read the iterations: %v", fsutil.Cause(err))
	}
	switch {
	case last == nil:
	case st.live:
		st.Running = last
		st.Iteration.Last = max(st.Iteration.Last, last.Iteration)
	default:
		st.unfinished = last.Iteration
	}
	return nil
}

// unbacked audits the passed nodes of the repository's tree against its
// history (lib/provenance); none before a run or a pass.
func unbacked(rp *runrecord.Repo) ([]provenance.Unbacked, error) {
	runID := runstate.Val(rp.State.RunID)
	if runID == "" || rp.Tree == nil || runrecord.CountNodes(rp.Tree).Passed == 0 {
		return []provenance.Unbacked{}, nil
	}
	rep, err := provenance.AuditRepo(rp.Root, rp.Tree)
	if err != nil {
		return nil, exit.Errorf(exit.RunnerError, "audit the passed nodes against the run's history: %v", err)
	}
	return rep.Unbacked, nil
}

// latest is the current run's newest record (through Effective); warn
// hears of each record that does not read.
func latest(root, runID string, warn func(format string, args ...any)) (runrecord.Record, bool) {
	if runID == "" {
		return runrecord.Record{}, false
	}
	recs, bad, err := runrecord.List(filepath.Join(root, layout.Runs))
	if err != nil {
		warn("read %s: %v", layout.Runs, fsutil.Cause(err))
		return runrecord.Record{}, false
	}
	for _, e := range bad {
		warn("%v (left out)", e)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].RunID == runID {
			return recs[i], true
		}
	}
	return runrecord.Record{}, false
}

// nextStep says what an operator does next, "" while the run just goes on.
func nextStep(st Status) string {
	sel := st.Selection
	switch {
	case len(st.Unbacked) > 0:
		u := st.Unbacked[0]
		more := ""
		if len(st.Unbacked) > 1 {
			more = fmt.Sprintf(" (and %d more: tree-validate --audit)", len(st.Unbacked)-1)
		}
		return fmt.Sprintf("node %s is passed without a backing loop commit (%s)%s: reopen it with %s; runner-step refuses to go on until then", u.Node, u.Reason, more, provenance.Fix(u.Leaf))
	case st.Cancel != nil && !st.live:
		return "a cancel request is pending (" + cancelWho(st.Cancel) + ") and no runner works: the next runner-loop would stop at once, using it up; runner-cancel --clear withdraws it, then runner-loop"
	case st.unfinished > 0:
		return fmt.Sprintf("iteration %d was left unfinished (no runner works on it): runner-step or runner-loop recovers it first", st.unfinished)
	case sel.Status == tree.StatusStuck && st.policy == tree.StuckSkip && len(st.StuckLeaves) > 1:
		return fmt.Sprintf("no leaf is left to work but %s (listed above): %s; then runner-loop", vocab.Plural(len(st.StuckLeaves), "stuck leaf", "stuck leaves"), tree.StuckHint("ID"))
	case sel.Status == tree.StatusStuck:
		return fmt.Sprintf("node %s has no attempts left (%d/%d): %s; then runner-loop", sel.ID, sel.Attempts, sel.MaxAttempts, tree.StuckHint(sel.ID))
	case sel.Status == tree.StatusWaiting:
		return "every open leaf waits for an operator's answer: answer each question above with tree-edit answer ID TEXT, then runner-loop (runner-loop --wait waits for answers)"
	case st.Status == runrecord.Paused && st.Pause != nil && st.Pause.Until != nil && st.Runner != nil:
		return pauseWhat(st.Pause) + " paused the run until " + st.Pause.Until.Format(time.RFC3339) + ": the loop goes on by itself then (runner-cancel stops it)"
	case st.Status == runrecord.Paused:
		return "a usage limit or an outage stopped the run: runner-loop again once the limit resets or the provider answers"
	case sel.Status == tree.StatusComplete:
		if st.Branch != "" {
			return "the tree is complete: review branch " + st.Branch + " and merge it"
		}
		return "the tree is complete"
	case st.Status == runrecord.Limit || (st.Iteration.Max > 0 && st.Iteration.Last >= st.Iteration.Max):
		return LimitStep(st.Reason)
	case st.Status == runrecord.Interrupted || st.Status == runrecord.Canceled || st.Status == runrecord.Timeout:
		return "runner-loop resumes the run"
	case st.Status == runrecord.Error:
		return "fix the cause in the reason, then runner-loop"
	}
	return ""
}

// LimitStep is the next step after a limit whose reason names it
// (max-iterations, max-tokens, max-cost-usd).
func LimitStep(reason string) string {
	switch {
	case strings.Contains(reason, "max-tokens"):
		return "raise [agent] max_tokens in " + layout.Config + ", then runner-loop"
	case strings.Contains(reason, "max-cost-usd"):
		return "raise [agent] max_cost_usd in " + layout.Config + ", then runner-loop"
	case strings.Contains(reason, "max-steps"):
		return "runner-loop continues the run"
	}
	return "raise max_iterations in " + layout.Config + " (or RUNNER_MAX_ITERATIONS), then runner-loop"
}

func printText(w io.Writer, st Status) {
	p := func(k, format string, args ...any) { fmt.Fprintf(w, "%-10s %s\n", k, fmt.Sprintf(format, args...)) }
	rec := "no run record"
	if st.Record != nil {
		rec = "record " + *st.Record
	}
	if st.RunID == "" {
		p("run", "none started (run runner-start)")
	} else {
		p("run", "%s  branch %s  %s", st.RunID, st.Branch, rec)
	}
	status := st.Status
	if st.Runner != nil {
		if st.Runner.PID == 0 {
			status += " (between steps)"
		} else {
			status += fmt.Sprintf(" (pid %d on %s)", st.Runner.PID, st.Runner.Host)
		}
	}
	if st.Reason != "" {
		status += ": " + st.Reason
	}
	p("status", "%s", status)
	it := fmt.Sprintf("%d/%d", st.Iteration.Last, st.Iteration.Max)
	if st.StartedAt != nil {
		it += "  elapsed " + (time.Duration(st.ElapsedSecs) * time.Second).String()
	}
	p("iteration", "%s", it)
	if r := st.Running; r != nil {
		p("running", "iteration %d  node %s  %s  attempt %d/%d  %s since %s", r.Iteration, r.NodePath, r.Mode, r.Attempt, r.MaxAttempts, r.Phase, r.Since.Format(time.RFC3339))
	}
	switch c := st.Cancel; {
	case c == nil:
	case st.live:
		p("cancel", "requested %s: the run stops before its next iteration, and the request is used up (runner-cancel --clear withdraws it)", cancelWho(c))
	default:
		p("cancel", "requested %s, with no runner to stop: the next runner-loop or runner-step stops at once and uses it up (runner-cancel --clear withdraws it)", cancelWho(c))
	}
	switch st.Baseline {
	case "":
	case string(vocab.GuardPass):
		p("baseline", "green: the guard passed when the run started")
	case string(vocab.GuardError):
		p("baseline", "the guard could not run when the run started: fix it, then runner-start runs the baseline again (see %s/%s/%s)", layout.Iterations, st.RunID, guard.BaselineFile)
	default:
		p("baseline", "red start: the guard's outcome was %s when the run started (see %s/%s/%s)", st.Baseline, layout.Iterations, st.RunID, guard.BaselineLog)
	}
	if s := st.Selection; s.ID != "" {
		p("node", "%s %s  %s  attempts %d/%d  %q", s.Status, s.Path, s.Mode, s.Attempts, s.MaxAttempts, s.Title)
	} else {
		p("node", "%s", s.Status)
	}
	n := st.Nodes
	p("tree", "%s: %d %s, %d %s, %d %s", vocab.Plural(n.Total, "node", "nodes"), n.Passed, vocab.NodePassed, n.Open, vocab.NodeOpen, n.Stuck, vocab.NodeStuck)
	for _, l := range st.StuckLeaves {
		p("stuck", "%s  attempts %d/%d  %q", l.Path, l.Attempts, l.MaxAttempts, l.Title)
	}
	for _, u := range st.Unbacked {
		p("unbacked", "%s: passed without a backing loop commit (%s); counted as open", u.Path, u.Reason)
	}
	printWaits(p, st)
	u, b := st.Usage, st.Budgets
	p("usage", "%d tokens of %s, $%.4f of %s", u.InputTokens+u.OutputTokens, limit(float64(b.MaxTokens), "%.0f"), u.CostUSD, limit(b.MaxCostUSD, "$%.2f"))
	if len(st.Recent) > 0 {
		fmt.Fprintln(w, "last iterations")
		t := cli.Table{Header: []string{"iter", "node", "result", "guard", "evidence", "duration", "tokens", "cost"}, Right: map[int]bool{0: true, 5: true, 6: true, 7: true}, Indent: "  "}
		for _, r := range st.Recent {
			t.Add(fmt.Sprint(r.Iter), r.NodeID, r.Result, r.Guard, evidence.OfRow(r), iterdir.ShortDuration(r.DurationMS), fmt.Sprint(r.Tokens), fmt.Sprintf("$%.4f", r.CostUSD))
		}
		t.Write(w, 0)
	}
	if r, ok := lastPass(st.Recent); ok {
		p("last pass", "iteration %d  node %s: %s", r.Iter, r.NodeID, evidence.Line(r.Evidence))
	}
	for _, e := range st.Log {
		p("log", "%s %s: %s", e.At.Format(time.RFC3339), e.Kind, e.Message)
	}
	if st.NextStep != "" {
		p("next", "%s", st.NextStep)
	}
}

// lastPass is the newest passed iteration among rows.
func lastPass(rows []iterdir.Row) (iterdir.Row, bool) {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Result == string(vocab.ResultPassed) {
			return rows[i], true
		}
	}
	return iterdir.Row{}, false
}

// cancelWho says who asked for a cancel and when.
func cancelWho(c *cancel.Pending) string {
	by := "by an unknown hand"
	if c.By != "" {
		by = "by " + c.By
		if c.PID > 0 {
			by += fmt.Sprintf(" (pid %d)", c.PID)
		}
	}
	return by + " at " + c.At.Format(time.RFC3339)
}

// printWaits prints the open questions, the answers queued and the pause.
func printWaits(p func(k, format string, args ...any), st Status) {
	for _, q := range st.Questions {
		p("question", "%s %q asks:", q.Path, q.Title)
		for _, l := range strings.Split(strings.TrimSpace(q.Question), "\n") {
			p("", "  %s", l)
		}
	}
	if st.QueuedAnswers > 0 {
		p("answers", "%s queued: the runner commits them before its next iteration", vocab.Plural(st.QueuedAnswers, "answer", "answers"))
	}
	if pz := st.Pause; pz != nil {
		line := fmt.Sprintf("%s on usage limits and outages, %s in all", vocab.Plural(pz.Count, "pause", "pauses"), time.Duration(pz.TotalSecs)*time.Second)
		if pz.Until != nil {
			cause := ""
			if pz.Cause != "" {
				cause = pz.Cause + ": "
			}
			line = fmt.Sprintf("until %s (since %s): %s%s; ", pz.Until.Format(time.RFC3339), pz.Since.Format(time.RFC3339), cause, pz.Reason) + line
		}
		p("pause", "%s", line)
	}
}

// pauseWhat is what the record's current pause is for: "an outage" or
// "a usage limit".
func pauseWhat(pz *runrecord.Pause) string {
	if pz.Cause == string(vocab.PauseOutage) {
		return "an outage"
	}
	return "a usage limit"
}

func limit(v float64, format string) string {
	if v == 0 {
		return "unlimited"
	}
	return fmt.Sprintf(format, v)
}

// Listed is a run record as runner-status --runs lists it: with the
// worktree it lives in ("" for this checkout).
type Listed struct {
	runrecord.Record
	Worktree string `json:"worktree"`
}

// runs prints every run record: this checkout's, then each run worktree's.
func (o *Options) runs(env *cli.Env) error {
	recs, bad, err := runrecord.List(env.Abs(layout.Runs))
	if err != nil {
		return exit.Errorf(exit.Negative, "read %s: %v", layout.Runs, fsutil.Cause(err))
	}
	list := make([]Listed, 0, len(recs))
	for _, r := range recs {
		list = append(list, Listed{Record: r})
	}
	if repo, err := git.Open(env.Dir); err == nil {
		ws, _ := worktree.List(repo)
		for _, w := range ws {
			if w.Path == repo.Root() {
				continue
			}
			wrecs, wbad, err := runrecord.List(filepath.Join(w.Path, filepath.FromSlash(layout.Runs)))
			if err != nil {
				env.Warnf("read the records of %s: %v", w.Path, fsutil.Cause(err))
				continue
			}
			bad = append(bad, wbad...)
			for _, r := range wrecs {
				list = append(list, Listed{Record: r, Worktree: w.Path})
			}
		}
	}
	for _, e := range bad {
		env.Warnf("%v", e)
	}
	if o.JSON || o.Wanted() {
		return o.PrintJSON(env, struct {
			Version int      `json:"version"`
			Runs    []Listed `json:"runs"`
		}{1, list})
	}
	t := cli.Table{Header: []string{"record", "status", "started", "iters", "passed", "cost", "where", "reason"}, Right: map[int]bool{3: true, 4: true, 5: true}}
	for _, r := range list {
		where := "."
		if r.Worktree != "" {
			where = env.Rel(r.Worktree)
		}
		t.Add(r.ID, r.Status, r.StartedAt.Format("2006-01-02T15:04:05Z"), fmt.Sprint(r.Iterations),
			fmt.Sprintf("%d/%d", r.Nodes.Passed, r.Nodes.Total), fmt.Sprintf("$%.4f", r.Usage.CostUSD), where, r.Reason)
	}
	return t.Write(env.Stdout, 0)
}
