// Package runnerworktree is the runner-worktree command
// ("Worktree runs"): it lists the worktrees runs work in (runner-start
// --worktree) and removes one, refusing uncommitted changes (seed 004) or a
// runner at work, and keeping the run's branch.
package runnerworktree

import (
	"fmt"
	"io"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/worktree"
)

// Options is the command line of runner-worktree.
type Options struct {
	cli.Chdir
	List   ListCmd   `cmd:"" default:"withargs" help:"List the run worktrees: run=<id> branch=<b> path=<p> head=<sha12> dirty=<bool> running=<bool>, one per line. The default subcommand."`
	Remove RemoveCmd `cmd:"" help:"Remove one run's worktree, keeping its branch. Refused (exit 1) when it has uncommitted changes or a runner is working there."`
}

// Main runs runner-worktree and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-worktree", "List the git worktrees runs work in (runner-start --worktree), or remove one (its branch is kept).", &Options{}, args, stdin, stdout, stderr)
}

// ListCmd is `runner-worktree list`.
type ListCmd struct {
	JSON bool `name:"json" help:"Print {\"version\": 1, \"worktrees\": [...]} instead."`
}

// Run lists the worktrees.
func (c *ListCmd) Run(env *cli.Env) error {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return exit.Errorf(exit.Negative, "%v", err)
	}
	ws, err := worktree.List(repo)
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	for i := range ws {
		if err := worktree.Inspect(&ws[i]); err != nil {
			return exit.Wrap(exit.RunnerError, err)
		}
	}
	if c.JSON {
		if ws == nil {
			ws = []worktree.Worktree{}
		}
		return env.PrintJSON(struct {
			Version   int                 `json:"version"`
			Worktrees []worktree.Worktree `json:"worktrees"`
		}{1, ws})
	}
	for _, w := range ws {
		fmt.Fprintf(env.Stdout, "run=%s branch=%s path=%s head=%.12s dirty=%v running=%v\n", w.RunID, w.Branch, w.Path, w.Head, w.Dirty, w.Running)
	}
	return nil
}

// RemoveCmd is `runner-worktree remove`.
type RemoveCmd struct {
	Run_ string `arg:"" name:"run" placeholder:"RUN-ID|DIR" predictor:"run" help:"The run id or the worktree's directory."`
}

// Run removes the worktree.
func (c *RemoveCmd) Run(env *cli.Env) error {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return exit.Errorf(exit.Negative, "%v", err)
	}
	w, err := worktree.Find(repo, c.Run_)
	if err != nil {
		return exit.Errorf(exit.Negative, "%v", err)
	}
	if err := worktree.Remove(repo, w); err != nil {
		return exit.Errorf(exit.Negative, "remove the worktree of run %s: %v", w.RunID, err)
	}
	fmt.Fprintf(env.Stdout, "removed run=%s path=%s branch=%s (kept)\n", w.RunID, w.Path, w.Branch)
	return nil
}
