// Package iterlog is the iter-log command: `begin` allocates an iteration
// (the max_iterations check, the tree snapshot, the clock and the shared
// deadline) and `end` completes its log (meta.json, diff.patch) and
// run_state.json (seed 000 §3.3, §5 step 12, §11).
package iterlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Options is the command line of iter-log.
type Options struct {
	cli.Chdir
	Begin   BeginCmd   `cmd:"" help:"Allocate the next iteration of the run for the selected leaf: check max_iterations, snapshot the tree (a blob in git's object database, named in begin.json), record the start and the deadline. Prints iter=<n> dir=<path>. Exit 4 when max_iterations is reached."`
	End     EndCmd     `cmd:"" help:"Complete the iteration's log: stage every change (git add -A; a git repository a session made inside the work tree, or a symbolic link out of it, as the files it points to), then meta.json (with the staged tree, for loop-commit --as-staged), diff.patch, and run_state.json for the next iteration."`
	List    ListCmd    `cmd:"" help:"One line per iteration of the run: iter, node, mode, status, guard, what a pass stands on (witnessed, suite only, exit status only), model, duration, tokens, cost and the agent's summary (cut to the terminal's width). --json for every field."`
	Show    ShowCmd    `cmd:"" help:"One iteration (default: the last): meta.json, the guard's run and its tests by name (counts, what a pass stands on, the level and who set it, the witness check, failing and missing tests), the agent's output, the guard's last lines, the diff stat and why it failed."`
	Recover RecoverCmd `cmd:"" help:"Find the run's last iteration left unfinished by a crash or kill and say what completes it: action=none, commit (meta.json written, commit missing), end (tree updated, log not closed), update (stopped before tree-update: record it as interrupted), or discarded (stopped before begin.json: the directory is set aside). Prints action=<a> dir=<path> selected=<id>."`
}

// Main runs iter-log and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("iter-log", "Open (begin) and close (end) one iteration's log directory .runner/iterations/<run-id>/<iter>/; read the run's history (list, show).", &Options{}, args, stdin, stdout, stderr)
}

// BeginCmd is `iter-log begin`.
type BeginCmd struct {
	Selected string `required:"" placeholder:"ID" predictor:"node" help:"The selected leaf (from tree-select)."`
	Now      string `hidden:"" help:"Start time (RFC 3339), for tests."`
}

// Run allocates the iteration and prints iter=<n> dir=<path>, or
// limit=<reason> when a limit is reached.
func (b *BeginCmd) Run(env *cli.Env) error {
	began, err := b.Begin(env)
	if began.Limit != "" {
		fmt.Fprintln(env.Stdout, "limit="+began.Limit)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "iter=%d dir=%s\n", began.Iter, began.Dir)
	return nil
}

// Began is what iter-log begin allocated: the iteration's number and its
// directory (relative to the repository's root); or, with the exit-4
// error, the limit reached (max-iterations, max-tokens, max-cost-usd).
type Began struct {
	Iter  int
	Dir   string
	Limit string
}

// Begin allocates the next iteration of the run for the selected leaf
// (b.Selected) in env's directory. Errors carry the exit code: 1 no run
// or an invalid tree, 4 a limit (Began.Limit says which), 6 runner error.
func (b *BeginCmd) Begin(env *cli.Env) (Began, error) {
	rs, err := runstate.Load(env.Abs(layout.RunState))
	if err != nil {
		return Began{}, exit.Errorf(exit.RunnerError, "%v", err)
	}
	runID := runstate.Val(rs.RunID)
	if runID == "" {
		return Began{}, exit.Errorf(exit.Negative, "no run started: run runner-start")
	}
	cfg, err := config.Load(env.Abs(layout.Config), os.LookupEnv)
	if err != nil {
		return Began{}, exit.Wrap(exit.RunnerError, err)
	}
	n := rs.NextIter
	if n > cfg.MaxIterations {
		return Began{Limit: "max-iterations"}, exit.Errorf(exit.Limit, "iteration limit reached: %s run, max_iterations=%d (raise it in %s or with RUNNER_MAX_ITERATIONS)", vocab.Plural(n-1, "iteration", "iterations"), cfg.MaxIterations, layout.Config)
	}
	// Run budgets (issue "Agent backends" §3): checked before an iteration
	// starts, against what the run's sessions reported so far.
	if cfg.Agent.MaxTokens > 0 || cfg.Agent.MaxCostUSD > 0 {
		used, err := iterdir.UsageBefore(env.Abs(filepath.Join(layout.Iterations, runID)), n)
		if err != nil {
			return Began{}, exit.Errorf(exit.RunnerError, "sum the run's usage: %v", err)
		}
		if tokens := used.InputTokens + used.OutputTokens; cfg.Agent.MaxTokens > 0 && tokens >= int64(cfg.Agent.MaxTokens) {
			return Began{Limit: "max-tokens"}, exit.Errorf(exit.Limit, "token budget reached: the run used %d tokens, max_tokens=%d (raise [agent] max_tokens in %s)", tokens, cfg.Agent.MaxTokens, layout.Config)
		}
		if cfg.Agent.MaxCostUSD > 0 && used.CostUSD >= cfg.Agent.MaxCostUSD {
			return Began{Limit: "max-cost-usd"}, exit.Errorf(exit.Limit, "cost budget reached: the run cost $%.4f, max_cost_usd=%g (raise [agent] max_cost_usd in %s)", used.CostUSD, cfg.Agent.MaxCostUSD, layout.Config)
		}
	}
	root, ps, err := loadTree(env)
	if err != nil {
		return Began{}, exit.Errorf(exit.RunnerError, "read %s: %w", layout.Tree, err)
	}
	if len(ps) > 0 {
		return Began{}, exit.Errorf(exit.Negative, "%s is invalid: %v", layout.Tree, ps)
	}
	node, path := tree.Find(root, b.Selected)
	if node == nil || !node.IsLeaf() || node.Passes {
		return Began{}, exit.Errorf(exit.RunnerError, "selected node '%s' is not an open leaf", b.Selected)
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return Began{}, exit.Wrap(exit.RunnerError, err)
	}
	head, err := repo.HeadCommit()
	if err != nil {
		return Began{}, exit.Wrap(exit.RunnerError, err)
	}
	branch, err := repo.CurrentBranch()
	if err != nil {
		return Began{}, exit.Wrap(exit.RunnerError, err)
	}
	rel := layout.IterDir(runID, n)
	dir := env.Abs(rel)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return Began{}, exit.Errorf(exit.RunnerError, "create %s: %w", filepath.Dir(rel), err)
	}
	// Mkdir, not MkdirAll: allocation is exclusive, an iteration directory
	// is never reused or overwritten.
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return Began{}, exit.Errorf(exit.RunnerError, "iteration directory %s already exists: an earlier step did not finish; run runner-step to recover it", rel)
		}
		return Began{}, exit.Errorf(exit.RunnerError, "create %s: %w", rel, err)
	}
	now := time.Now().UTC()
	if b.Now != "" {
		if now, err = time.Parse(time.RFC3339, b.Now); err != nil {
			return Began{}, exit.Errorf(exit.Usage, "--now: %w", err)
		}
	}
	rec := iterdir.Begin{
		Version: 1, RunID: runID, Iteration: n, NodeID: node.ID, NodePath: path, Mode: node.Next,
		Attempts: node.Attempts, MaxAttempts: node.MaxAttempts,
		StartedAt: now, Deadline: now.Add(cfg.IterationTimeout()), HeadBefore: head, Branch: branch,
	}
	// The tree snapshot is a blob in git's object database, named in
	// begin.json (iterdir.SnapshotTree): in a step it is the tree the base
	// commit holds, which git has already, and the log keeps no copy.
	if rec.TreeBlob, err = repo.WriteBlob(tree.Encode(root)); err != nil {
		return Began{}, exit.Errorf(exit.RunnerError, "snapshot the tree: %w", err)
	}
	if err := iterdir.Write(dir, iterdir.BeginFile, rec); err != nil {
		return Began{}, exit.Errorf(exit.RunnerError, "write %s: %w", iterdir.BeginFile, err)
	}
	return Began{Iter: n, Dir: rel}, nil
}

// EndCmd is `iter-log end`.
type EndCmd struct {
	Iter string `required:"" placeholder:"DIR" help:"The iteration directory (from iter-log begin)."`
	Now  string `hidden:"" help:"End time (RFC 3339), for tests."`
}

// statusOf maps tree-update's result to the iteration status of meta.json
// and the commit message (an agent error counts as retry, DESIGN.md
// decision 5).
func statusOf(result string) string { return string(vocab.StatusOf(vocab.Result(result))) }

// Run completes the iteration's log and prints its line (Line).
func (e *EndCmd) Run(env *cli.Env) error {
	m, err := e.End(env)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, Line(m))
	return nil
}

// Line is an ended iteration's line as iter-log end prints it (and
// runner-step after "step: "): run=<id> iter=<n> node=<id> status=<s>
// guard=<g>.
func Line(m iterdir.Meta) string {
	return fmt.Sprintf("run=%s iter=%d node=%s status=%s guard=%s", m.RunID, m.Iteration, m.NodeID, m.Status, m.Guard)
}

// End completes the log of the iteration in e.Iter and returns its
// meta.json as written. Errors carry the exit code: 6 runner error, 80
// a bad --now.
func (e *EndCmd) End(env *cli.Env) (iterdir.Meta, error) {
	var none iterdir.Meta
	dir := env.Abs(e.Iter)
	var begin iterdir.Begin
	if err := iterdir.Read(dir, iterdir.BeginFile, &begin); err != nil {
		return none, exit.Errorf(exit.RunnerError, "read %s: %w", iterdir.BeginFile, err)
	}
	var upd iterdir.Update
	if err := iterdir.Read(dir, iterdir.UpdateFile, &upd); err != nil {
		return none, exit.Errorf(exit.RunnerError, "read %s (run tree-update first): %w", iterdir.UpdateFile, err)
	}
	m, err := e.meta(dir, begin, upd)
	if err != nil {
		return none, err
	}
	_, ps, err := loadTree(env)
	if err != nil {
		return none, exit.Errorf(exit.RunnerError, "read %s: %w", layout.Tree, err)
	}
	if len(ps) > 0 {
		return none, exit.Errorf(exit.RunnerError, "%s is invalid after tree-update: %v", layout.Tree, ps)
	}
	statePath, err := writeRunState(env, begin, m, upd.Summary)
	if err != nil {
		return none, err
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return none, exit.Wrap(exit.RunnerError, err)
	}
	patch, err := stage(env, repo, statePath, begin.HeadBefore, &m)
	if err != nil {
		return none, err
	}
	// meta.json is written and fsynced while diff.patch is, and renamed
	// into place once both logs are durable.
	logErr, err := iterdir.WriteAfter(dir, iterdir.MetaFile, m, func() error {
		if err := fsutil.WriteAtomicUnsynced(filepath.Join(dir, iterdir.DiffPatch), patch, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", iterdir.DiffPatch, err)
		}
		if err := fsutil.SyncDir(dir); err != nil {
			return fmt.Errorf("write %s: %w", iterdir.DiffPatch, err)
		}
		return nil
	})
	if logErr != nil {
		return none, exit.Errorf(exit.RunnerError, "%w", logErr)
	}
	if err != nil {
		return none, exit.Errorf(exit.RunnerError, "write %s: %w", iterdir.MetaFile, err)
	}
	return m, nil
}

// meta is the iteration's meta.json but for its staged tree and index:
// begin.json, update.json, agent.json and guard.json (when written), the
// run's usage through this iteration and the end time (--now, else now).
func (e *EndCmd) meta(dir string, begin iterdir.Begin, upd iterdir.Update) (iterdir.Meta, error) {
	m := iterdir.Meta{
		Version: 1, RunID: begin.RunID, Iteration: begin.Iteration, NodeID: begin.NodeID,
		NodePath: begin.NodePath, Mode: begin.Mode, Status: statusOf(upd.Result), Result: upd.Result,
		Guard: upd.Guard, AgentError: upd.Result == string(vocab.ResultAgentError), Reasons: upd.Reasons,
		AttemptsBefore: begin.Attempts, AttemptsAfter: upd.Attempts, MaxAttempts: upd.MaxAttempts,
		Passes: upd.Passes, Summary: upd.Summary, StartedAt: begin.StartedAt, HeadBefore: begin.HeadBefore,
	}
	if m.Guard == "" {
		m.Guard = tree.GuardSkipped
	}
	if m.Reasons == nil {
		m.Reasons = []string{}
	}
	var ag iterdir.Agent
	if err := iterdir.Read(dir, iterdir.AgentFile, &ag); err == nil {
		m.Agent = &ag
	} else if !errors.Is(err, os.ErrNotExist) {
		return m, exit.Errorf(exit.RunnerError, "read %s: %w", iterdir.AgentFile, err)
	}
	// The run's usage: the sum through the previous iteration plus this
	// session's, one file read whatever the run's length.
	runUsage, err := iterdir.UsageBefore(filepath.Dir(dir), begin.Iteration)
	if err != nil {
		return m, exit.Errorf(exit.RunnerError, "sum the run's usage: %v", err)
	}
	if m.Agent != nil {
		runUsage = runUsage.Add(m.Agent.Usage)
	}
	m.RunUsage = runUsage
	var gd iterdir.Guard
	if err := iterdir.Read(dir, iterdir.GuardFile, &gd); err == nil {
		m.GuardRun = &gd
		if gd.Outcome != tree.GuardPass && gd.Outcome != tree.GuardFail {
			m.Guard = gd.Outcome // timeout, interrupted or error: the guard did not finish
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return m, exit.Errorf(exit.RunnerError, "read %s: %w", iterdir.GuardFile, err)
	}
	now := time.Now().UTC()
	if e.Now != "" {
		var err error
		if now, err = time.Parse(time.RFC3339, e.Now); err != nil {
			return m, exit.Errorf(exit.Usage, "--now: %w", err)
		}
	}
	m.EndedAt = now
	m.DurationMS = now.Sub(begin.StartedAt).Milliseconds()
	return m, nil
}

// writeRunState advances run_state.json past the iteration (next_iter,
// and the last_* fields of an attempt) and returns its path; the fsync
// of its directory is left to stage. Errors carry the runner-error exit
// code.
func writeRunState(env *cli.Env, begin iterdir.Begin, m iterdir.Meta, summary string) (string, error) {
	// run_state.json first: it is part of the iteration's commit, so the
	// diff below includes it.
	rs, err := runstate.Load(env.Abs(layout.RunState))
	if err != nil {
		return "", exit.Errorf(exit.RunnerError, "%v", err)
	}
	if runstate.Val(rs.RunID) != begin.RunID {
		return "", exit.Errorf(exit.RunnerError, "run_state.json run_id %q is not the iteration's run %q", runstate.Val(rs.RunID), begin.RunID)
	}
	rs.NextIter = begin.Iteration + 1
	// The last_* fields are the previous attempt the next session is told
	// about (context-write). A runner error or a pause was no attempt and
	// is never shown to the agent (seed 002, DESIGN.md decision 5): it
	// leaves them as they were; meta.json and the commit still record it.
	if m.Status != string(vocab.StatusRunnerError) && m.Status != string(vocab.StatusPaused) {
		last := m.Status
		if m.AgentError {
			last = "agent_error"
		}
		it, node := begin.Iteration, begin.NodeID
		rs.LastStatus, rs.LastSummary, rs.LastGuard = &last, runstate.Str(summary), runstate.Str(guardState(m.Guard))
		rs.LastIter, rs.LastNode = &it, &node
	}
	// Its content is in place (written, fsynced, renamed) before git
	// stages it; the fsync of its directory waits on the disk while git
	// works (below).
	statePath := env.Abs(layout.RunState)
	if err := fsutil.WriteAtomicUnsynced(statePath, runstate.Encode(rs), 0o644); err != nil {
		return "", exit.Errorf(exit.RunnerError, "write %s: %w", layout.RunState, err)
	}
	return statePath, nil
}

// stage stages the work tree and returns the iteration's diff against
// head, with the staged tree and index in m, while run_state.json's
// directory (statePath) is synced. The tree after the iteration is no
// file of its log: it is in the staged tree, and in the commit made of it
// (iterdir.SnapshotTree). Errors carry the runner-error exit code.
func stage(env *cli.Env, repo *git.Repo, statePath, head string, m *iterdir.Meta) ([]byte, error) {
	// Durable before meta.json, which marks the log complete (iter-log
	// recover: a crash before it redoes this whole command, action=end):
	// run_state.json's directory, whose fsync is made while git stages
	// and diffs (it waits on the disk, git on the work tree), and
	// diff.patch.
	logged := make(chan error, 1)
	go func() {
		if err := fsutil.SyncDir(filepath.Dir(statePath)); err != nil {
			logged <- fmt.Errorf("write %s: %w", layout.RunState, err)
			return
		}
		logged <- nil
	}()
	// The step's one staging of the work tree: the diff below
	// and loop-commit --as-staged use this index. The checks after the
	// agent and the guard read only the protected parts of the work tree
	// and stage nothing.
	var patch []byte
	var staged git.Staged
	err := addAll(env, repo, m)
	if err == nil {
		patch, staged, err = stagedDiff(env, repo, head, m)
	}
	if lerr := <-logged; lerr != nil {
		return nil, exit.Errorf(exit.RunnerError, "%w", lerr)
	}
	if err != nil {
		return nil, exit.Wrap(exit.RunnerError, err)
	}
	m.StagedTree, m.StagedIndex = staged.Tree, staged.Index
	return patch, nil
}

// addAll stages the work tree (git add -A); a file git refuses to stage
// (`.GIT/x`, `git~1/x`: git.Repo.Refused) is moved into the git directory
// under treeloop/refused/<run>/<iteration> first, saying so, so that
// no session stops the step at its staging.
func addAll(env *cli.Env, repo *git.Repo, m *iterdir.Meta) error {
	dirs, err := repo.Dirs()
	if err != nil {
		return err
	}
	keep := filepath.Join(dirs.Git, "treeloop", "refused", m.RunID, layout.IterName(m.Iteration))
	moved, err := repo.AddAllMoving(keep)
	if len(moved) > 0 {
		env.Warnf("moved %s git refuses to stage (no commit can hold them) to %s: %q", vocab.Plural(len(moved), "path", "paths"), keep, moved)
	}
	return err
}

// stagedDiff is the iteration's diff from the index just staged and that
// index's tree, for loop-commit --as-staged to commit (git.Staged). The
// tree is written first (git.IndexTree: from head's trees and the staged
// changes, or by git write-tree, which stores the index's cache of tree
// ids back under index.lock) and the diff taken between head and it
// (git diff --binary HEAD TREE): two trees are compared without reading
// the index again, so the pair costs less than a diff --cached beside the
// write-tree, and diff.patch is the diff of the very tree committed. A
// git repository a session made inside the work tree, which git staged as
// a gitlink, or a symbolic link out of the work tree, is staged as the
// files it points to instead (stageFiles), and the tree written again.
// An index with no stamp (not .git/index) or a failed write-tree gives
// the diff of the index (git diff --cached --binary) and the zero Staged:
// loop-commit then writes the tree itself, and reports its error.
func stagedDiff(env *cli.Env, repo *git.Repo, head string, m *iterdir.Meta) ([]byte, git.Staged, error) {
	var cs []git.StagedChange
	if _, ok := repo.IndexStamp(); ok {
		tree, changes, err := repo.IndexTree(head, "loop")
		if cs = changes; git.Pointers(cs) {
			var again bool
			if cs, again, err = stageFiles(env, repo, head, m, cs); err != nil {
				return nil, git.Staged{}, err
			}
			if again {
				tree, _, err = repo.IndexTree(head, "loop")
			}
		}
		if err == nil {
			if stamp, ok := repo.IndexStamp(); ok {
				patch, err := repo.Run("diff", "--binary", head, tree)
				return patch, git.Staged{Tree: tree, Index: stamp}, err
			}
		}
	}
	if cs == nil {
		if _, _, err := stageFiles(env, repo, head, m, nil); err != nil {
			return nil, git.Staged{}, err
		}
	}
	patch, err := repo.Run("diff", "--cached", "--binary", head)
	return patch, git.Staged{}, err
}

// stageFiles stages as files what a session made that git would commit as
// a pointer to content elsewhere (git.Repo.StageFiles): a repository
// inside the work tree, a symbolic link out of it (copied only without a
// sandbox: config.AgentUnconfined). The guard ran on that content, which the commit would
// leave out (docs/threat-model.md). It returns the changes staged in the
// end and whether any were.
func stageFiles(env *cli.Env, repo *git.Repo, head string, m *iterdir.Meta, cs []git.StagedChange) ([]git.StagedChange, bool, error) {
	unconfined := func() bool { return config.AgentUnconfined(env.Abs(layout.Config)) }
	return repo.StageFiles(head, m.RunID, m.Iteration, cs, unconfined, func(line string) { env.Warnf("%s", line) })
}

// loadTree loads the repository's tree.json, mapped rather than copied
// (fsutil.MapFile: a large tree costs a fresh process fewer page faults)
// and released once loaded (tree.Load copies what it keeps).
func loadTree(env *cli.Env) (*tree.Node, tree.Problems, error) {
	data, release, err := fsutil.MapFile(env.Abs(layout.Tree), env.Dir, 0)
	defer release()
	if err != nil {
		return nil, nil, err
	}
	root, ps := tree.Load(data)
	return root, ps, nil
}

// guardState maps a guard outcome onto run_state's last_guard values: a
// guard that did not finish (timeout, interrupted, error) did not fail, so
// it is skipped, and the next session gets no failure.md for it.
func guardState(g string) string {
	if g == tree.GuardPass || g == tree.GuardFail {
		return g
	}
	return tree.GuardSkipped
}

// RecoverCmd is `iter-log recover`.
type RecoverCmd struct{}

// Run diagnoses the run's last iteration (iterdir.Recover).
func (r *RecoverCmd) Run(env *cli.Env) error {
	rec, err := iterdir.Recover(env.Dir)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	if rec.Warning != "" {
		env.Warnf("%s", rec.Warning)
	}
	fmt.Fprintln(env.Stdout, rec)
	return nil
}
