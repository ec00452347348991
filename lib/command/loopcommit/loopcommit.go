// Package loopcommit is the loop-commit command (seed 000 §9, §10; DESIGN.md
// decision 11). `check` enforces the git policy and the run identity before a
// step: not on main or master, a clean working tree (untracked files
// included), GOAL.md's id == run_state.json's run_id, and the branch
// runner/<run_id>. `commit` commits one iteration with its deterministic
// message and records the commit in the iteration's meta.json.
package loopcommit

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/goal"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/ratchet"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/subject"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Options is the command line of loop-commit.
type Options struct {
	cli.Chdir
	Check  CheckCmd  `cmd:"" help:"Check the git policy and run identity before a step. Prints run=<id> branch=<b> head=<sha>; exit 1 with the reason when refused."`
	Commit CommitCmd `cmd:"" default:"withargs" help:"Commit the iteration (git add -A, one commit, message from meta.json) and record the commit in meta.json. The default subcommand."`
}

// Main runs loop-commit and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("loop-commit", "Check the git policy before a step (check), or commit one iteration with its deterministic message (commit, the default).", &Options{}, args, stdin, stdout, stderr)
}

// MaxBodyBytes caps the agent's summary in a commit message body.
const MaxBodyBytes = 4096

// FullMessage is Message with the agent's summary as the body,
// so `git log` shows what each session said it did. The subject is
// unchanged; the body is the summary with trailing spaces and blank lines
// removed (as git's whitespace cleanup would), a line that reads as a
// Treeloop- trailer quoted ("> "), capped at MaxBodyBytes, and left out
// when empty.
func FullMessage(subject, summary string) string {
	var lines []string
	// A control character (U+0000 among them, which git refuses in a
	// message) is dropped: the message is rebuilt the same way on
	// recovery, so one git refuses would stop every later step.
	summary = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == 0x7f {
			return -1
		}
		return r
	}, summary)
	for _, l := range strings.Split(summary, "\n") {
		if l = strings.TrimRight(l, " \t\r"); l != "" {
			// A line that reads as one of the runner's trailers is quoted:
			// the ratchet and the pull-request body read trailers back,
			// and a session's summary must not speak for the runner.
			if k, _, ok := strings.Cut(l, ":"); ok && strings.HasPrefix(strings.ToLower(strings.TrimSpace(k)), "treeloop-") {
				l = "> " + l
			}
			lines = append(lines, l)
		}
	}
	body := strings.Join(lines, "\n")
	if len(body) > MaxBodyBytes {
		body = strings.ToValidUTF8(body[:MaxBodyBytes], "") + " …"
	}
	if body == "" {
		return subject
	}
	return subject + "\n\n" + body
}

// ModelTrailer is the git trailer key of an iteration's commit that names
// the session's model (agent.json model), when it is known.
const ModelTrailer = "Treeloop-Model"

// trailers are the iteration's commit trailers, one paragraph after the
// summary: the session's model, and a passed iteration's test count
// (ratchet.Trailer) where the ratchet reads the run's best back from
// (lib/ratchet): git history, not a file the agent could rewrite.
func trailers(m iterdir.Meta) []string {
	var t []string
	if m.Agent != nil {
		if model := strings.TrimSpace(strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return ' '
			}
			return r
		}, m.Agent.Model)); model != "" {
			t = append(t, ModelTrailer+": "+model)
		}
	}
	if g := m.GuardRun; m.Result == string(vocab.ResultPassed) && g != nil && g.Ratchet != nil && g.Ratchet.Held {
		t = append(t, ratchet.TrailerLine(g.Ratchet.Count))
	}
	if g := m.GuardRun; m.Result == string(vocab.ResultPassed) && g != nil && g.Evidence != nil && g.Evidence.Held {
		t = append(t, evidence.Trailers(*g.Evidence)...)
	}
	return t
}

// CheckCmd is `loop-commit check`.
type CheckCmd struct {
	JSON bool `name:"json" help:"Print the result as JSON."`
	cli.Get
}

// CheckResult is what `check` prints.
type CheckResult struct {
	RunID  string `json:"run_id"`
	Branch string `json:"branch"`
	Head   string `json:"head"`
}

// Run checks the policy and prints the result.
func (c *CheckCmd) Run(env *cli.Env) error {
	res, err := c.Check(env)
	if err != nil {
		return err
	}
	if c.JSON || c.Wanted() {
		return c.PrintJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "run=%s branch=%s head=%s\n", res.RunID, res.Branch, res.Head)
	return nil
}

// Check checks the git policy and the run identity in env's directory
// and returns the run, its branch and the commit the step starts from.
// Errors carry the exit code: 1 refused (the reason says what to do),
// 6 runner error.
func (c *CheckCmd) Check(env *cli.Env) (CheckResult, error) {
	var none CheckResult
	repo, err := git.Open(env.Dir)
	if err != nil {
		return none, exit.Errorf(exit.Negative, "%v", err)
	}
	// No step starts beside a session of an earlier one that still runs
	// (DESIGN.md decision 21): whatever it does would land in this one.
	if live := proc.LiveSessions(repo.Root()); len(live) > 0 {
		return none, exit.Errorf(exit.Negative, "a session of an earlier iteration is still running (%s): stop it (kill the pid) before the next step", strings.Join(live, "; "))
	}
	// One git status gives the branch, HEAD and the changes.
	st, err := repo.Status()
	if err != nil {
		return none, exit.Wrap(exit.RunnerError, err)
	}
	branch := st.Branch
	switch branch {
	case "":
		return none, exit.Errorf(exit.Negative, "HEAD is detached: check out the run branch (run runner-start)")
	case "main", "master":
		return none, exit.Errorf(exit.Negative, "refusing to step on %s: run runner-start to branch off", branch)
	}
	if status := st.Paths; len(status) > 0 {
		more := ""
		if len(status) > 1 {
			more = fmt.Sprintf(" and %d more", len(status)-1)
		}
		return none, exit.Errorf(exit.Negative, "the working tree is not clean (%s%s): commit or stash the changes first", status[0], more)
	}
	head := st.Head
	if head == "" {
		return none, exit.Errorf(exit.Negative, "git rev-parse: HEAD has no commit yet (run runner-start)")
	}
	// A merge (or cherry-pick, revert, rebase) in progress with nothing
	// left to resolve shows in no status, yet the next git commit would
	// finish it: the iteration's commit would get its second parent.
	if op, end, ok, err := repo.InProgress(); err != nil {
		return none, exit.Wrap(exit.RunnerError, err)
	} else if ok {
		return none, exit.Errorf(exit.Negative, "a %s is in progress: finish it (%s) first", op, end)
	}
	goalData, err := fsutil.ReadFile(env.Abs(layout.Goal), env.Dir, 1<<20)
	if err != nil {
		return none, exit.Errorf(exit.Negative, "read %s: %v (run runner-init, then runner-start)", layout.Goal, fsutil.Cause(err))
	}
	doc, err := goal.Parse(goalData)
	if err != nil {
		return none, exit.Errorf(exit.Negative, "%s: %v", layout.Goal, err)
	}
	rs, err := runstate.Load(env.Abs(layout.RunState))
	if err != nil {
		return none, exit.Errorf(exit.Negative, "%v (run runner-start)", err)
	}
	runID := runstate.Val(rs.RunID)
	switch {
	case runID == "":
		return none, exit.Errorf(exit.Negative, "no run started: run_state.json has no run_id (run runner-start)")
	case doc.ID() != runID:
		return none, exit.Errorf(exit.Negative, "run id mismatch: %s has id %q, run_state.json has %q (run runner-start)", layout.Goal, doc.ID(), runID)
	case branch != layout.BranchPrefix+runID:
		return none, exit.Errorf(exit.Negative, "run id mismatch: on branch %s, the run is %s (run runner-start)", branch, runID)
	}
	return CheckResult{RunID: runID, Branch: branch, Head: head}, nil
}

// CommitCmd is `loop-commit commit`.
type CommitCmd struct {
	Iter     string `required:"" placeholder:"DIR" help:"The iteration directory (meta.json from iter-log end)."`
	AsStaged bool   `name:"as-staged" help:"Commit the index as iter-log end staged it, without staging again (runner-step: nothing runs between them), as the tree iter-log end wrote of it (meta.json staged_tree) while the index is unchanged. Without it every change is staged first (git add -A)."`
	JSON     bool   `name:"json" help:"Print the result as JSON."`
	cli.Get
}

// CommitResult is what `commit` prints.
type CommitResult struct {
	Commit  string `json:"commit"`
	Message string `json:"message"`
	Subject string `json:"-"` // the message's first line
}

// Run commits the iteration and prints the commit.
func (c *CommitCmd) Run(env *cli.Env) error {
	res, err := c.Commit(env)
	if err != nil {
		return err
	}
	if c.JSON || c.Wanted() {
		return c.PrintJSON(env, res)
	}
	fmt.Fprintf(env.Stdout, "commit=%s %s\n", res.Commit, res.Subject)
	return nil
}

// Commit commits the iteration in c.Iter and records the commit in its
// meta.json. The commit is made even when nothing changed
// (--allow-empty): every iteration has exactly one commit. Errors carry
// the runner-error exit code (6).
func (c *CommitCmd) Commit(env *cli.Env) (CommitResult, error) {
	var none CommitResult
	dir := env.Abs(c.Iter)
	var m iterdir.Meta
	if err := iterdir.Read(dir, iterdir.MetaFile, &m); err != nil {
		return none, exit.Errorf(exit.RunnerError, "read %s (run iter-log end first): %v", filepath.Join(c.Iter, iterdir.MetaFile), fsutil.Cause(err))
	}
	if m.Commit != "" {
		return none, exit.Errorf(exit.RunnerError, "iteration %d is already committed as %s", m.Iteration, m.Commit)
	}
	repo, err := git.Open(env.Dir)
	if err != nil {
		return none, exit.Wrap(exit.RunnerError, err)
	}
	if branch, err := repo.CurrentBranch(); err != nil {
		return none, exit.Wrap(exit.RunnerError, err)
	} else if branch != layout.BranchPrefix+m.RunID {
		return none, exit.Errorf(exit.RunnerError, "on branch %q, not %s%s: the iteration is not committed", branch, layout.BranchPrefix, m.RunID)
	}
	subj := subject.Iteration{Run: m.RunID, Iter: m.Iteration, Node: m.NodeID, Status: vocab.Status(m.Status), Guard: vocab.Guard(m.Guard)}.String()
	// What no reader would take for the iteration's commit is not written.
	if _, ok := subject.ParseIteration(subj); !ok {
		return none, exit.Errorf(exit.RunnerError, "%s makes no valid commit subject (%q): rerun iter-log end for it", filepath.Join(c.Iter, iterdir.MetaFile), subj)
	}
	msg := FullMessage(subj, m.Summary)
	if t := trailers(m); len(t) > 0 {
		msg += "\n\n" + strings.Join(t, "\n")
	}
	sha, err := c.commit(env, repo, m, subj, msg, git.Staged{Tree: m.StagedTree, Index: m.StagedIndex})
	if err != nil {
		return none, exit.Errorf(exit.RunnerError, "commit iteration %d: %v", m.Iteration, err)
	}
	// meta.json lives in the gitignored iterations directory: recording the
	// commit there does not change the commit.
	m.Commit = sha
	if err := iterdir.Write(dir, iterdir.MetaFile, m); err != nil {
		return none, exit.Errorf(exit.RunnerError, "record the commit in %s: %v", iterdir.MetaFile, fsutil.Cause(err))
	}
	return CommitResult{Commit: sha, Message: msg, Subject: subj}, nil
}

// commit makes the iteration's commit, unless a step killed after its
// commit but before recording it left it as HEAD already (the subject
// names the run and the iteration, so it is unique): then HEAD is the
// iteration's commit and no second one is made.
//
// With --as-staged (runner-step, right after iter-log end staged every
// change and derived the diff from that index) the index is committed as
// it is: the step scans the work tree once for both. A step
// that gets here again after a kill goes through recovery, which commits
// without it, so the check for an existing commit is only needed there.
// The check compares subjects: the body carries the agent's summary.
func (c *CommitCmd) commit(env *cli.Env, repo *git.Repo, m iterdir.Meta, subject, msg string, staged git.Staged) (string, error) {
	if !c.AsStaged {
		staged = git.Staged{} // the index is staged again: its tree is written anew
		if head, err := repo.CommitMessage("HEAD"); err == nil && strings.SplitN(head, "\n", 2)[0] == subject {
			if st, err := repo.StatusPorcelain(); err == nil && len(st) == 0 {
				return repo.HeadCommit()
			}
		}
		if err := repo.AddAll(); err != nil {
			return "", err
		}
		// As iter-log end stages: a repository made inside the work tree,
		// or a symbolic link out of it, is committed as the files it
		// points to (git.Repo.StageFiles).
		unconfined := func() bool { return config.AgentUnconfined(env.Abs(layout.Config)) }
		if _, _, err := repo.StageFiles("HEAD", m.RunID, m.Iteration, nil, unconfined, func(line string) { env.Warnf("%s", line) }); err != nil {
			return "", err
		}
	}
	// The loop's own commit: the pre-commit hook lets through the
	// runner-owned transitions tree-update has judged. Without hooks or
	// settings only git commit honours, git's plumbing commits the index
	// as staged, without git commit's second refresh of the whole index
	//. With --as-staged, the tree iter-log end wrote of that
	// index (meta.json's staged_tree) is committed while the index is still
	// the file it was written from: no second write-tree.
	return repo.CommitIndexAs("loop", msg, staged)
}
