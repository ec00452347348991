// Package treeupdate is the tree-update command: it validates the agent's
// edits to the tree against the pre-iteration snapshot, applies the
// runner-owned transition for the iteration's outcome (003, 2026-01-17),
// inserts decomposition children and writes the next canonical tree.
package treeupdate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/agentout"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/stepctx"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Outcomes of an iteration that tree-update handles.
const (
	OutcomeAgent       = "agent"                         // the agent finished: judge its output and edits
	OutcomeTimeout     = string(vocab.ResultTimeout)     // the iteration timed out: snapshot restored, no attempt consumed
	OutcomeInterrupted = string(vocab.ResultInterrupted) // the iteration was interrupted: likewise
	OutcomeRunnerError = string(vocab.ResultRunnerError) // a runner error (spawn, I/O): likewise, never the agent's fault
	OutcomePaused      = string(vocab.ResultPaused)      // the session hit a usage limit or an outage: likewise, and the run pauses
)

// Options is the command line of tree-update.
type Options struct {
	cli.Chdir
	stepctx.Base
	Iter        string   `placeholder:"DIR" help:"Iteration directory: its begin.json names the default --snapshot (tree_blob; tree.before.json in an older directory), and it is the default home of --output (output.json) and --error-log (agent_error.log)."`
	Tree        string   `placeholder:"FILE" default:".runner/state/tree.json" help:"The tree the agent may have edited; the next tree is written here."`
	Snapshot    string   `placeholder:"FILE" help:"The tree before the agent ran (default: the blob DIR/begin.json names, or DIR/tree.before.json in an older directory or one without begin.json; with --base, the tree committed in the base and this flag is refused)."`
	Output      string   `placeholder:"FILE" help:"The agent output JSON (default DIR/output.json)."`
	ErrorLog    string   `placeholder:"FILE" help:"Where the reasons of an agent error go (default DIR/agent_error.log)."`
	Selected    string   `required:"" placeholder:"ID" predictor:"node" help:"The selected leaf's id."`
	Guard       string   `enum:"pass,fail,skipped" default:"skipped" help:"Guard outcome: pass, fail or skipped."`
	Outcome     string   `enum:"agent,timeout,interrupted,runner-error,paused" default:"agent" help:"agent (judge output and edits); timeout, interrupted, runner-error or paused (a usage limit or an outage ended the session): restore the snapshot, consume no attempt."`
	AgentError  []string `placeholder:"REASON" help:"An agent error found by the caller (e.g. a protected path touched); repeatable."`
	MaxAttempts int      `placeholder:"N" help:"max_attempts for new children (default: max_attempts_default of config.toml)."`
	StuckPolicy string   `name:"stuck-policy" placeholder:"POLICY" help:"What becomes of a leaf whose last attempt this iteration used: stop or skip leave it stuck; decompose sends it back to the agent once in decompose mode, with one attempt more (sent_back), unless it was sent back before (default: stuck_policy of config.toml)."`
	JSON        bool     `name:"json" help:"Print the result as JSON on stdout."`
	cli.Get
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if o.StuckPolicy != "" && !slices.Contains(tree.StuckPolicies, tree.StuckPolicy(o.StuckPolicy)) {
		return fmt.Errorf("--stuck-policy must be stop, skip or decompose, got %q", o.StuckPolicy)
	}
	if o.Base.Base != "" && o.Snapshot != "" {
		return errors.New("give --base or --snapshot, not both")
	}
	if o.Iter == "" && ((o.Snapshot == "" && o.Base.Base == "") || (o.Outcome == OutcomeAgent && o.Output == "")) {
		return errors.New("give --iter DIR, or --snapshot (or --base) and --output")
	}
	return nil
}

// Main runs tree-update and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("tree-update", "Validate the agent's tree edits against the snapshot, apply the runner-owned transition and write the next canonical tree. Exit 0 updated, 5 agent error (snapshot restored, attempt consumed, reasons in agent_error.log), 6 runner error (nothing written).", &Options{}, args, stdin, stdout, stderr)
}

func (o *Options) path(flag, def string) string {
	if flag != "" {
		return flag
	}
	return filepath.Join(o.Iter, def)
}

// Run updates the tree and prints the result: result=<r> id=<id>
// passes=<bool> attempts=<n>/<m> [children=<a,b>], or JSON.
func (o *Options) Run(env *cli.Env) error {
	res, err := o.Update(env)
	if res.Result == "" {
		return err
	}
	if o.JSON || o.Wanted() {
		if perr := o.PrintJSON(env, res); perr != nil {
			return perr
		}
	} else {
		line := fmt.Sprintf("result=%s id=%s passes=%v attempts=%d/%d", res.Result, res.ID, res.Passes, res.Attempts, res.MaxAttempts)
		if len(res.Children) > 0 {
			line += " children=" + strings.Join(res.Children, ",")
		}
		fmt.Fprintln(env.Stdout, line)
	}
	return err
}

// Update judges the iteration's outcome, writes the next tree and
// update.json, and returns the result. An agent error is written too and
// returned with a Silent exit 5, its reasons said on env's stderr; other
// errors carry exit 6 (nothing written).
func (o *Options) Update(env *cli.Env) (iterdir.Update, error) {
	treePath := env.Abs(o.Tree)
	snapData, snapName, cfgAt, err := o.reference(env)
	if err != nil {
		return iterdir.Update{}, err
	}
	snap, ps := tree.Load(snapData)
	if len(ps) > 0 {
		return iterdir.Update{}, exit.Errorf(exit.RunnerError, "snapshot %s is invalid: %v", snapName, ps)
	}
	if err := o.checkSelected(env); err != nil {
		return iterdir.Update{}, err
	}
	sel, _ := tree.Find(snap, o.Selected)
	if sel == nil || !sel.IsLeaf() || sel.Passes {
		return iterdir.Update{}, exit.Errorf(exit.RunnerError, "selected node '%s' is not an open leaf of the snapshot", o.Selected)
	}
	if sel.IsWaiting() {
		return iterdir.Update{}, exit.Errorf(exit.RunnerError, "selected node '%s' waits for an operator's answer in the snapshot: it is not selected until tree-edit answer", o.Selected)
	}

	res := iterdir.Update{Version: 1, ID: o.Selected, Guard: tree.GuardSkipped}
	next, reasons, err := o.next(env, snap, sel, snapData, treePath, cfgAt, &res)
	if err != nil {
		return iterdir.Update{}, err
	}

	// Whatever happened, the tree written must be valid: this is the
	// runner's own output, so a failure here is a runner error.
	data := tree.Encode(next)
	if ps := tree.Verify(next, data); len(ps) > 0 {
		return iterdir.Update{}, exit.Errorf(exit.RunnerError, "next tree would be invalid: %v", ps)
	}
	if len(reasons) > 0 {
		logPath := env.Abs(o.path(o.ErrorLog, "agent_error.log"))
		if err := fsutil.WriteAtomic(logPath, []byte(strings.Join(reasons, "\n")+"\n"), 0o644); err != nil {
			return iterdir.Update{}, exit.Errorf(exit.RunnerError, "write %s: %w", env.Rel(logPath), err)
		}
	}
	n, _ := tree.Find(next, o.Selected)
	res.Passes, res.Attempts, res.MaxAttempts = n.Passes, n.Attempts, n.MaxAttempts
	if res.Children == nil {
		res.Children = []string{}
	}
	if res.Reasons == nil {
		res.Reasons = []string{}
	}
	if err := o.write(env, treePath, data, res); err != nil {
		return iterdir.Update{}, err
	}
	if res.Result == string(vocab.ResultAgentError) {
		for _, r := range reasons {
			env.Errorf("agent error: %s", r)
		}
		return res, cli.Silent(exit.AgentError)
	}
	return res, nil
}

// next is the next tree for the iteration's outcome: the snapshot for an
// outcome that was no attempt, else the judged agent's transition, or the
// snapshot with an attempt consumed and the agent-error reasons. res gets
// the result and summary. An error is a runner error.
func (o *Options) next(env *cli.Env, snap, sel *tree.Node, snapData []byte, treePath string, cfgAt func() (config.Config, error), res *iterdir.Update) (*tree.Node, []string, error) {
	switch o.Outcome {
	case OutcomeTimeout, OutcomeInterrupted, OutcomeRunnerError, OutcomePaused:
		res.Result = o.Outcome
		if o.Outcome == OutcomeRunnerError && o.Iter != "" {
			res.Summary = runnerErrorSummary(env.Abs(o.Iter))
		}
		return snap, nil, nil
	}
	maxAttempts, policy := o.MaxAttempts, tree.StuckPolicy(o.StuckPolicy)
	if maxAttempts == 0 || policy == "" {
		cfg, err := cfgAt()
		if err != nil {
			return nil, nil, err
		}
		if maxAttempts == 0 {
			maxAttempts = cfg.MaxAttemptsDefault
		}
		if policy == "" {
			policy = tree.StuckPolicy(cfg.StuckPolicy)
		}
	}
	next, reasons, err := o.judge(env, snap, sel, snapData, treePath, maxAttempts, res)
	if err != nil {
		return nil, nil, err
	}
	if next == nil {
		next = snap.Clone()
		if err := tree.Transition(next, o.Selected, tree.Outcome{Status: tree.AgentRetry, Guard: tree.GuardSkipped}, maxAttempts); err != nil {
			return nil, nil, exit.Wrap(exit.RunnerError, err)
		}
		res.Result = string(vocab.ResultAgentError)
		res.Reasons = reasons
		res.Summary = "agent error: " + strings.Join(reasons, "; ")
	}
	// The attempt this iteration used may have been the leaf's last.
	if tree.SendBack(next, o.Selected, policy) {
		n, _ := tree.Find(next, o.Selected)
		env.Errorf("node '%s' used its %d attempts: it goes back to the agent once in decompose mode, with one attempt more (stuck_policy %s)", o.Selected, n.Attempts, policy)
	}
	return next, reasons, nil
}

// write writes the next tree (data) to treePath and, with --iter, the
// result to update.json once the tree is durable.
func (o *Options) write(env *cli.Env, treePath string, data []byte, res iterdir.Update) error {
	writeTree := func() error { return fsutil.WriteAtomic(treePath, data, 0o644) }
	// update.json says the tree is updated (iter-log recover: action=end),
	// so it appears only once the tree is durable; its own write and fsync
	// are made meanwhile.
	var treeErr, recErr error
	if o.Iter != "" {
		treeErr, recErr = iterdir.WriteAfter(env.Abs(o.Iter), iterdir.UpdateFile, res, writeTree)
	} else {
		treeErr = writeTree()
	}
	if treeErr != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %w", env.Rel(treePath), treeErr)
	}
	if recErr != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %w", iterdir.UpdateFile, recErr)
	}
	return nil
}

// reference is what the agent's tree is judged against: with --base, the
// tree and config.toml committed in the commit the step started from
// (no file a session can write is a reference); else the
// snapshot file and the work tree's config.toml.
// checkSelected refuses a --selected that is not the node the iteration
// began on (its begin.json, when --iter names a directory that has one):
// the node id reaches tree-update by argv, and the transition must fall on
// the node the agent worked on.
func (o *Options) checkSelected(env *cli.Env) error {
	if o.Iter == "" || !iterdir.Exists(env.Abs(o.Iter), iterdir.BeginFile) {
		return nil
	}
	b, err := iterdir.LoadBegin(env.Abs(o.Iter))
	if err != nil {
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	if b.NodeID != "" && b.NodeID != o.Selected {
		return exit.Errorf(exit.RunnerError, "--selected %s, but iteration %s began on node %s: pass --selected %s", o.Selected, env.Rel(env.Abs(o.Iter)), b.NodeID, b.NodeID)
	}
	return nil
}

func (o *Options) reference(env *cli.Env) (snap []byte, name string, cfg func() (config.Config, error), err error) {
	if o.Base.Base == "" {
		data, name, err := o.snapshot(env)
		if err != nil {
			return nil, "", nil, err
		}
		return data, name, func() (config.Config, error) {
			c, err := config.Load(env.Abs(layout.Config), os.LookupEnv)
			if err != nil {
				return c, exit.Wrap(exit.RunnerError, err)
			}
			return c, nil
		}, nil
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return nil, "", nil, exit.Wrap(exit.RunnerError, err)
	}
	base, err := stepctx.Resolve(repo, o.Base.Base)
	if err != nil {
		return nil, "", nil, err
	}
	// The tree and config.toml in one git process.
	files, err := repo.ShowFiles(git.File{Rev: base, Path: layout.Tree}, git.File{Rev: base, Path: layout.Config})
	if err == nil {
		err = files[0].Err
	}
	switch {
	case err != nil:
		return nil, "", nil, exit.Errorf(exit.RunnerError, "read %s at %s: %v", layout.Tree, base, err)
	case !files[0].OK:
		return nil, "", nil, exit.Errorf(exit.RunnerError, "%s is not committed in %s", layout.Tree, base)
	}
	conf := files[1]
	return files[0].Data, fmt.Sprintf("%s at %.12s", layout.Tree, base), func() (config.Config, error) {
		if conf.Err != nil {
			return config.Config{}, exit.Errorf(exit.RunnerError, "read %s at %s: %v", layout.Config, base, conf.Err)
		}
		return stepctx.ConfigFrom(base, conf.Data, conf.OK)
	}, nil
}

// snapshot is the reference without --base: --snapshot FILE, else the
// tree the iteration began with (iterdir.SnapshotTree: the blob its
// begin.json names, or its tree.before.json), else DIR/tree.before.json
// in a directory without begin.json. Errors carry the runner-error exit
// code.
func (o *Options) snapshot(env *cli.Env) ([]byte, string, error) {
	if o.Snapshot == "" && o.Iter != "" && iterdir.Exists(env.Abs(o.Iter), iterdir.BeginFile) {
		b, err := iterdir.LoadBegin(env.Abs(o.Iter))
		if err != nil {
			return nil, "", exit.Errorf(exit.RunnerError, "%v", err)
		}
		data, release, name, err := iterdir.SnapshotTree(env.Dir, env.Abs(o.Iter), b)
		defer release()
		if err != nil {
			return nil, "", exit.Errorf(exit.RunnerError, "read snapshot: %v", err)
		}
		if b.TreeBlob == "" {
			name = env.Rel(filepath.Join(env.Abs(o.Iter), name))
		}
		return bytes.Clone(data), name, nil
	}
	snapPath := env.Abs(o.path(o.Snapshot, iterdir.TreeBefore))
	data, err := fsutil.ReadFile(snapPath, "", 0)
	if err != nil {
		return nil, "", exit.Errorf(exit.RunnerError, "read snapshot %s: %w", env.Rel(snapPath), fsutil.Cause(err))
	}
	return data, env.Rel(snapPath), nil
}

// judge validates the agent's output and tree edits and applies the
// transition. It returns the next tree, or nil and the agent-error reasons;
// an error is a runner error.
func (o *Options) judge(env *cli.Env, snap, sel *tree.Node, snapData []byte, treePath string, maxAttempts int, res *iterdir.Update) (*tree.Node, []string, error) {
	reasons := append([]string{}, o.AgentError...)
	// judged: agent-exec already found the output missing or invalid (its
	// reasons are in agent.json); judging it again would repeat them.
	judged := false
	if o.Iter != "" {
		var rec iterdir.Agent
		if err := iterdir.Read(env.Abs(o.Iter), iterdir.AgentFile, &rec); err == nil {
			reasons = append(reasons, rec.AgentErrors...)
			judged = rec.Class != "" && rec.Class != "ok" && rec.Class != "policy"
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, nil, exit.Errorf(exit.RunnerError, "read %s: %w", iterdir.AgentFile, err)
		}
	}
	outPath := env.Abs(o.path(o.Output, "output.json"))
	var out agentout.Output
	outData, err := fsutil.ReadFile(outPath, env.Dir, agentout.MaxBytes)
	if judged {
		// reasons already say why
	} else if errors.Is(err, os.ErrNotExist) {
		reasons = append(reasons, "no agent output: "+env.Rel(outPath)+" was not written")
	} else if err != nil {
		reasons = append(reasons, fmt.Sprintf("agent output %s: %v", env.Rel(outPath), fsutil.Cause(err)))
	} else if out, err = agentout.Parse(outData, sel.Next); err != nil {
		reasons = append(reasons, err.Error())
	}
	res.Summary = out.Summary

	// Mapped, not copied: a large tree costs a fresh process fewer page
	// faults; tree.Load copies what it keeps.
	editedData, release, err := fsutil.MapFile(treePath, env.Dir, 0)
	defer release()
	var edited *tree.Node
	if err != nil {
		reasons = append(reasons, fmt.Sprintf("tree %s unreadable after the agent ran: %v", env.Rel(treePath), fsutil.Cause(err)))
	} else {
		var ps tree.Problems
		if bytes.Equal(editedData, snapData) {
			// The agent left the tree as committed: loaded already, and
			// with no edit there is nothing for CheckAgentEdits to find
			// (the selected node is an open leaf of the snapshot).
			edited = snap.Clone()
		} else if edited, ps = tree.LoadEdited(editedData); len(ps) == 0 {
			ps = tree.CheckAgentEdits(snap, edited, o.Selected)
		}
		for _, p := range ps {
			reasons = append(reasons, "tree: "+p.String())
		}
	}
	if len(reasons) > 0 {
		return nil, dedupe(reasons), nil
	}

	for _, note := range tree.RestoreRunnerOwned(snap, edited) {
		env.Warnf("runner-owned field edited by the agent: %s", note)
	}
	if out.Status == tree.AgentBlocked && len(sel.Answers) >= tree.MaxAnswers {
		return nil, []string{fmt.Sprintf("status=blocked, but node '%s' has had %d questions answered, the most it may: decide from the answers and go on", o.Selected, tree.MaxAnswers)}, nil
	}
	guard := o.Guard
	if out.Status != tree.AgentDone {
		guard = tree.GuardSkipped
	} else if guard == tree.GuardSkipped {
		return nil, nil, exit.Errorf(exit.Usage, "status=done needs --guard pass or fail: run the guard first")
	}
	if err := tree.Transition(edited, o.Selected, tree.Outcome{Status: out.Status, Guard: guard, Children: out.Children, Question: out.Summary}, maxAttempts); err != nil {
		return nil, nil, exit.Wrap(exit.RunnerError, err)
	}
	res.Guard = guard
	switch {
	case out.Status == tree.AgentDone && guard == tree.GuardPass:
		res.Result = string(vocab.ResultPassed)
	case out.Status == tree.AgentDone:
		res.Result = string(vocab.ResultFailed)
	case out.Status == tree.AgentBlocked:
		res.Result = string(vocab.ResultBlocked)
	case out.Status == tree.AgentDecomposed:
		res.Result = string(vocab.ResultDecomposed)
		n, _ := tree.Find(edited, o.Selected)
		for _, c := range n.Children {
			res.Children = append(res.Children, c.ID)
		}
	default:
		res.Result = string(vocab.ResultRetry)
	}
	return edited, nil, nil
}

// dedupe drops repeated reasons, keeping the first of each.
func dedupe(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// runnerErrorSummary is the iteration's summary for a runner error: why,
// from the agent's or the guard's record when either could not run, and
// runner_error.log, as iter-log list and the commit's body show it; ""
// when none says.
func runnerErrorSummary(dir string) string {
	var why []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && len(why) < 3 && !slices.Contains(why, s) {
			why = append(why, s)
		}
	}
	var a iterdir.Agent
	if iterdir.Read(dir, iterdir.AgentFile, &a) == nil && a.Class != "" && a.Class != "ok" {
		add(a.Message)
	}
	var g iterdir.Guard
	if iterdir.Read(dir, iterdir.GuardFile, &g) == nil && g.Outcome == string(vocab.GuardError) {
		add(g.Message)
	}
	if data, err := fsutil.ReadFile(filepath.Join(dir, iterdir.RunnerErrorLog), "", 1<<20); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			add(l)
		}
	}
	if len(why) == 0 {
		return ""
	}
	return "runner error: " + strings.Join(why, "; ")
}
