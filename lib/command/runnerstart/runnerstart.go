// Package runnerstart is the runner-start command: it fixes the run identity
// (seed 000 §10), and runs the [setup] commands, the guard
// baseline of a new run, and with --worktree gives the run a git worktree
// of its own. The run id comes from --id, from GOAL.md's front matter, or
// is generated once as run-<sha8> of the goal text, with a -N suffix while
// the branch runner/<id> already exists; the id is written to GOAL.md, the
// branch runner/<id> is created or checked out, run_state.json is reset when
// the id changed, and the bootstrap is committed.
package runnerstart

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/goal"
	"github.com/treeloop/treeloop/lib/guard"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/ratchet"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/setup"
	"github.com/treeloop/treeloop/lib/subject"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Options is the command line of runner-start.
type Options struct {
	cli.Chdir
	ID         string `placeholder:"RUN-ID" help:"Use this run id (written to GOAL.md) instead of GOAL.md's id or a generated one."`
	Worktree   bool   `help:"Run in a git worktree of its own on runner/<id> (default directory .runner/worktrees/<id>, or DIR), leaving this checkout and its branch untouched; an existing worktree of the run is resumed. Several runs of one repository can then work at once."`
	Dir        string `arg:"" optional:"" placeholder:"DIR" help:"The worktree's directory (with --worktree)."`
	NoBaseline bool   `name:"no-baseline" help:"Do not run the guard once at the start of a new run to record whether the repository starts green."`
	Rebaseline bool   `name:"rebaseline" help:"Run the guard baseline again for a run under way (after fixing a guard that could not run, or the failures of a red start): its record, the tests that pass (PASS_TO_PASS) and the guard's caches' digest are taken anew and committed."`
	JSON       bool   `name:"json" help:"Print the result as JSON."`
	cli.Get
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if o.Dir != "" && !o.Worktree {
		return fmt.Errorf("DIR (%s) is only for --worktree", o.Dir)
	}
	if o.Rebaseline && o.NoBaseline {
		return fmt.Errorf("--rebaseline and --no-baseline exclude each other")
	}
	return nil
}

// Main runs runner-start and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-start", "Start or resume the run of .runner/GOAL.md: run id, branch runner/<id> (in its own worktree with --worktree), run_state.json, the [setup] commands, the guard baseline of a new run, bootstrap commit. Prints <started|resumed> run=<id> branch=<b> commit=<sha> [worktree=<dir>] [setup=<ran|done>] [baseline=<outcome>]. Exit 1 when refused (dirty tree, invalid id or tree), 6 runner error (a setup command failed, or the guard cannot run: fix what the message names, then runner-start again), 130/143 interrupted.", &Options{}, args, stdin, stdout, stderr)
}

// Result is what runner-start prints.
type Result struct {
	RunID    string `json:"run_id"`
	Branch   string `json:"branch"`
	Status   string `json:"status"`             // started (new run id), resumed (same run id)
	Commit   string `json:"commit"`             // the bootstrap commit, or HEAD when nothing changed
	Worktree string `json:"worktree,omitempty"` // the run's worktree (--worktree), absolute
	Setup    string `json:"setup,omitempty"`    // [setup] commands: "ran" now, "done" before; "" when none are configured
	Baseline string `json:"baseline,omitempty"` // the guard at the start of a new run: pass, fail, error, timeout ("" when not run)
}

// baselineWhen says when runner-start runs the guard baseline: never
// (--no-baseline), for a new run (and again while the guard could not
// run at its start), or also for a run under way (--rebaseline).
type baselineWhen int

const (
	baselineNever baselineWhen = iota
	baselineNew
	baselineAgain
)

// prepare runs, before the bootstrap commit, the [setup] commands of the
// run (unless they completed in this checkout or worktree before) and the
// guard baseline (when). It returns the trailer for the bootstrap commit:
// the baseline's passing-test count when [guard] ratchet is set and the
// start is green, which the test ratchet then counts as the run's first
// best. A guard that cannot run is refused (a runner error): the run
// would spend every attempt on it; runner-start runs the baseline again
// until it can.
func prepare(env *cli.Env, repo *git.Repo, res *Result, when baselineWhen) (trailer string, err error) {
	cfg, err := config.Load(filepath.Join(repo.Root(), layout.Config), os.LookupEnv)
	if err != nil {
		return "", exit.Wrap(exit.RunnerError, err)
	}
	if len(cfg.Setup.Commands) > 0 {
		res.Setup = "done"
		if !setup.IsDone(repo.Root(), res.RunID) {
			res.Setup = "ran"
			if _, err := setup.Run(repo.Root(), res.RunID, cfg); err != nil {
				return "", err
			}
		}
	}
	if !runBaseline(repo.Root(), res, when) {
		return "", nil
	}
	rec, err := baseline(env, repo, res.RunID, cfg)
	if err != nil {
		return "", err
	}
	res.Baseline = rec.Outcome
	switch rec.Outcome {
	case guard.Pass:
	case guard.Error:
		return "", exit.Errorf(exit.RunnerError, "the guard baseline: %s: fix it, then runner-start again (runner-check --guard runs the guard as the run will)", rec.Message)
	default:
		env.Warnf("the repository does not start green (%s): the run's prompts say so until a guard passes (or runner-start --rebaseline, once you fixed it, finds it green); see %s/%s/%s", rec.Message, layout.Iterations, res.RunID, guard.BaselineLog)
	}
	if r := rec.Ratchet; r != nil && r.Held {
		trailer = ratchet.TrailerLine(r.Count)
	}
	return trailer, nil
}

// baseline runs the guard baseline (guard.Baseline). One whose run
// changed files a commit holds (a Cargo.lock made, bytecode git does not
// ignore) runs again, as guard-run runs the guard again in the run; a
// file the second run changes too is one the guard rewrites on every run,
// where no pass would stand: a line says so, and what to do.
func baseline(env *cli.Env, repo *git.Repo, runID string, cfg config.Config) (iterdir.Guard, error) {
	before := committed(repo)
	rec, err := guard.Baseline(env, runID, cfg)
	if err != nil || before == nil || rec.Outcome == guard.Error {
		return rec, err
	}
	after := committed(repo)
	if len(evidence.Differ(before, after)) == 0 {
		return rec, nil
	}
	if rec, err = guard.Baseline(env, runID, cfg); err != nil {
		return rec, err
	}
	if again := evidence.Differ(after, committed(repo)); len(again) > 0 {
		env.Warnf("the guard's baseline run changed %s, which a commit holds, on each of two runs: in the run a pass stands only on a guard run that changes nothing the iteration commits, so none would; untrack these and have git ignore them (git rm --cached, .gitignore), then runner-start --rebaseline", strings.Join(again, ", "))
	}
	return rec, nil
}

// committed is what a commit of the work tree would hold at the paths
// that differ from HEAD, the runner's own files left out
// (evidence.State); nil when it cannot be read (the baseline then says
// nothing of it).
func committed(repo *git.Repo) evidence.State {
	changed, _, err := repo.ChangesSince("HEAD")
	if err != nil {
		return nil
	}
	changed = slices.DeleteFunc(changed, func(p string) bool { return strings.HasPrefix(p, layout.Runner+"/") })
	st, err := evidence.StateOf(repo.Root(), changed)
	if err != nil {
		return nil
	}
	return st
}

// runBaseline reports whether the guard baseline runs now: for a new run,
// for a run whose baseline found a guard that could not run, and on
// --rebaseline.
func runBaseline(root string, res *Result, when baselineWhen) bool {
	switch {
	case when == baselineNever:
		return false
	case when == baselineAgain || res.Status == "started":
		return true
	}
	rec, ok, err := guard.ReadBaseline(root, res.RunID)
	return err == nil && ok && rec.Outcome == guard.Error
}

// Run starts or resumes the run.
func (o *Options) Run(env *cli.Env) error {
	// The user's git config as it is now, before a session could change
	// it, for every git process of this command (runner-step's, when it
	// started this one).
	if err := git.Hermetic(env.Dir); err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	var res Result
	var err error
	if o.Worktree {
		res, err = o.startWorktree(env)
	} else {
		res, err = start(env, o.ID, o.baselineWhen())
	}
	if err != nil {
		return err
	}
	if o.JSON || o.Wanted() {
		return o.PrintJSON(env, res)
	}
	line := fmt.Sprintf("%s run=%s branch=%s commit=%s", res.Status, res.RunID, res.Branch, res.Commit)
	if res.Worktree != "" {
		line += " worktree=" + res.Worktree
	}
	if res.Setup != "" {
		line += " setup=" + res.Setup
	}
	if res.Baseline != "" {
		line += " baseline=" + res.Baseline
	}
	fmt.Fprintln(env.Stdout, line)
	return nil
}

// baselineWhen is when the guard baseline runs, by the flags.
func (o *Options) baselineWhen() baselineWhen {
	switch {
	case o.NoBaseline:
		return baselineNever
	case o.Rebaseline:
		return baselineAgain
	}
	return baselineNew
}

// start starts or resumes the run of the repository at env.Dir, with run
// id idFlag when given; baseline: when to run the guard baseline.
func start(env *cli.Env, idFlag string, baseline baselineWhen) (Result, error) {
	repo, err := git.OpenRoot(env.Dir)
	if err != nil {
		return Result{}, exit.Wrap(exit.Negative, err)
	}
	in, err := readInputs(env, repo)
	if err != nil {
		return Result{}, err
	}
	id, err := runID(repo, in.doc, idFlag)
	if err != nil {
		return Result{}, err
	}
	branch := layout.BranchPrefix + id
	if err := switchBranch(repo, branch); err != nil {
		return Result{}, err
	}
	res := Result{RunID: id, Branch: branch, Status: "resumed"}
	if err := in.adopt(env, id, &res); err != nil {
		return Result{}, err
	}
	// [setup] commands and the guard baseline: before the
	// bootstrap commit, which carries the baseline's test count.
	trailer, err := prepare(env, repo, &res, baseline)
	if err != nil {
		return Result{}, err
	}
	if res.Commit, err = bootstrapCommit(repo, id, trailer); err != nil {
		return Result{}, err
	}
	return res, nil
}

// inputs are the files a run starts from: GOAL.md (its root title and
// body), the tree and the run state.
type inputs struct {
	goalPath    string
	doc         goal.Doc
	title, body string
	acceptance  []string
	root        *tree.Node
	rs          runstate.State
}

// readInputs reads and checks the inputs, and that the working tree has
// no change outside .runner/.
func readInputs(env *cli.Env, repo *git.Repo) (inputs, error) {
	in := inputs{goalPath: env.Abs(layout.Goal)}
	goalData, err := fsutil.ReadFile(in.goalPath, env.Dir, 1<<20)
	if err != nil {
		return in, exit.Errorf(exit.Negative, "read %s: %v (run runner-init first)", layout.Goal, fsutil.Cause(err))
	}
	if in.doc, err = goal.Parse(goalData); err != nil {
		return in, exit.Errorf(exit.Negative, "%s: %v", layout.Goal, err)
	}
	if in.title, in.body, in.acceptance, err = in.doc.Root(); err != nil {
		return in, exit.Errorf(exit.Negative, "%s: %v", layout.Goal, err)
	}
	treeData, err := fsutil.ReadFile(env.Abs(layout.Tree), env.Dir, 0)
	if err != nil {
		return in, exit.Errorf(exit.Negative, "read %s: %v (run runner-init first)", layout.Tree, fsutil.Cause(err))
	}
	var ps tree.Problems
	if in.root, ps = tree.Load(treeData); len(ps) > 0 {
		return in, exit.Errorf(exit.Negative, "%s is invalid (%s; see tree-validate): %v", layout.Tree, vocab.Plural(len(ps), "error", "errors"), ps[0])
	}
	if in.rs, err = runstate.Load(env.Abs(layout.RunState)); err != nil {
		return in, exit.Errorf(exit.Negative, "%v (run runner-init first)", err)
	}
	status, err := repo.StatusPorcelain()
	if err != nil {
		return in, exit.Wrap(exit.RunnerError, err)
	}
	for _, e := range status {
		if p := e[3:]; !strings.HasPrefix(p, layout.Runner+"/") {
			return in, exit.Errorf(exit.Negative, "the working tree has changes outside %s/ (%s): commit or stash them first", layout.Runner, p)
		}
	}
	return in, nil
}

// switchBranch checks out branch, creating it when it does not exist.
func switchBranch(repo *git.Repo, branch string) error {
	cur, err := repo.CurrentBranch()
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	if cur == branch {
		return nil
	}
	exists, err := repo.BranchExists(branch)
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	if exists {
		err = repo.Checkout(branch)
	} else {
		err = repo.CheckoutNewBranch(branch)
	}
	if err != nil {
		return exit.Errorf(exit.RunnerError, "switch to %s: %v", branch, err)
	}
	return nil
}

// adopt writes the run id into GOAL.md, a fresh run state for a new run
// id (res.Status started), and GOAL.md's title and goal into a root that
// has not been worked.
func (in *inputs) adopt(env *cli.Env, id string, res *Result) error {
	if in.doc.ID() != id {
		in.doc.SetID(id)
		if err := fsutil.WriteAtomic(in.goalPath, in.doc.Bytes(), 0o644); err != nil {
			return exit.Errorf(exit.RunnerError, "write %s: %v", layout.Goal, fsutil.Cause(err))
		}
	}
	if runstate.Val(in.rs.RunID) != id {
		res.Status = "started"
		in.rs = runstate.New(id)
		if err := runstate.Save(env.Abs(layout.RunState), in.rs); err != nil {
			return exit.Errorf(exit.RunnerError, "write %s: %v", layout.RunState, fsutil.Cause(err))
		}
	}
	// GOAL.md is the goal the user writes: until the root has been worked
	// it is the root's title, goal and acceptance (seed 000 preamble);
	// after that the tree keeps its goal and a changed GOAL.md is a new
	// goal (--new).
	if in.root.Title == in.title && in.root.Goal == in.body && slices.Equal(in.root.Acceptance, in.acceptance) {
		return nil
	}
	if !unworked(in.root, in.rs) {
		env.Warnf("%s differs from the root node, which has been worked: the tree keeps its goal; to work the new goal run runner-init --new", layout.Goal)
		return nil
	}
	in.root.Title, in.root.Goal, in.root.Acceptance = in.title, in.body, in.acceptance
	if err := fsutil.WriteAtomic(env.Abs(layout.Tree), tree.Encode(in.root), 0o644); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", layout.Tree, fsutil.Cause(err))
	}
	return nil
}

// bootstrapCommit commits what runner-start changed (all of the working
// tree, which has changes only under .runner/) with the bootstrap message
// and trailer, and returns the commit: HEAD when nothing changed.
func bootstrapCommit(repo *git.Repo, id, trailer string) (string, error) {
	if err := repo.AddAll(); err != nil {
		return "", exit.Wrap(exit.RunnerError, err)
	}
	staged, err := repo.Run("diff", "--cached", "--name-only")
	if err != nil && repo.HasCommits() {
		return "", exit.Wrap(exit.RunnerError, err)
	}
	if len(staged) == 0 && repo.HasCommits() {
		head, err := repo.HeadCommit()
		if err != nil {
			return "", exit.Wrap(exit.RunnerError, err)
		}
		return head, nil
	}
	msg := subject.Start(id)
	if trailer != "" {
		msg += "\n\n" + trailer
	}
	commit, err := repo.Commit(msg)
	if err != nil {
		return "", exit.Errorf(exit.RunnerError, "bootstrap commit: %v", err)
	}
	return commit, nil
}

// runID is the run's id: idFlag, GOAL.md's id, or a generated one; it must
// match tree.IDPattern.
func runID(repo *git.Repo, doc goal.Doc, idFlag string) (string, error) {
	id := idFlag
	if id == "" {
		id = doc.ID()
	}
	if id == "" {
		var err error
		if id, err = generateID(repo, doc.Body); err != nil {
			return "", exit.Wrap(exit.RunnerError, err)
		}
	}
	if !tree.ValidID(id) {
		return "", exit.Errorf(exit.Negative, "run id %q does not match %s: fix the id in %s", id, tree.IDPattern, layout.Goal)
	}
	return id, nil
}

// unworked reports whether no iteration has worked the root yet: it is a
// leaf with no attempt spent and the run has allocated no iteration.
func unworked(root *tree.Node, rs runstate.State) bool {
	return len(root.Children) == 0 && !root.Passes && root.Attempts == 0 && rs.NextIter == 1
}

// generateID is run-<sha8 of the goal text>, with -2, -3, … appended while
// the branch runner/<id> exists (seed 000 §10).
func generateID(repo *git.Repo, body []byte) (string, error) {
	sum := sha256.Sum256(body)
	base := "run-" + hex.EncodeToString(sum[:4])
	id := base
	for n := 2; ; n++ {
		exists, err := repo.BranchExists(layout.BranchPrefix + id)
		if err != nil {
			return "", err
		}
		if !exists {
			return id, nil
		}
		id = fmt.Sprintf("%s-%d", base, n)
	}
}
