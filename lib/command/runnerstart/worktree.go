package runnerstart

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/goal"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/worktree"
)

// worktreeFiles are the runner files a new worktree takes from the
// checkout, so that the run starts from what the user prepared even when
// it is not committed yet.
var worktreeFiles = []string{
	layout.Goal, layout.Gitignore, layout.Tree, layout.Config, layout.RunState, layout.Schema,
	layout.AgentOutputSchema, layout.Assumptions, layout.Questions,
}

// startWorktree is runner-start --worktree: the run works in a git
// worktree of its own on runner/<id> (lib/worktree), created from the
// checkout's HEAD with the checkout's runner files, or resumed when the run
// has one already; the checkout is not touched.
func (o *Options) startWorktree(env *cli.Env) (Result, error) {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return Result{}, exit.Errorf(exit.Negative, "%v: run runner-start inside a git repository", err)
	}
	goalData, err := fsutil.ReadFile(filepath.Join(repo.Root(), layout.Goal), repo.Root(), 1<<20)
	if err != nil {
		return Result{}, exit.Errorf(exit.Negative, "read %s: %v (run runner-init first)", layout.Goal, fsutil.Cause(err))
	}
	doc, err := goal.Parse(goalData)
	if err != nil {
		return Result{}, exit.Errorf(exit.Negative, "%s: %v", layout.Goal, err)
	}
	id, err := runID(repo, doc, o.ID)
	if err != nil {
		return Result{}, err
	}
	dir := filepath.Join(repo.Root(), filepath.FromSlash(layout.Worktree(id)))
	if o.Dir != "" {
		dir = env.Abs(o.Dir)
	}
	if w, err := worktree.Find(repo, id); err == nil {
		if o.Dir != "" && w.Path != dir {
			return Result{}, exit.Errorf(exit.Negative, "run %s already works in the worktree %s: resume it there, or remove it first (runner-worktree remove %s)", id, w.Path, id)
		}
		dir = w.Path
	} else {
		if err := worktree.Add(repo, id, dir); err != nil {
			return Result{}, exit.Errorf(exit.Negative, "create the worktree of run %s: %v", id, err)
		}
		if err := copyRunnerFiles(repo.Root(), dir); err != nil {
			return Result{}, exit.Errorf(exit.RunnerError, "copy the runner files into the worktree: %v", fsutil.Cause(err))
		}
	}
	wenv := *env
	wenv.Dir = dir
	res, err := start(&wenv, id, o.baselineWhen())
	res.Worktree = dir
	return res, err
}

// copyRunnerFiles copies the checkout's runner files that the new worktree
// lacks or has in another version.
func copyRunnerFiles(from, to string) error {
	for _, rel := range worktreeFiles {
		src := filepath.Join(from, filepath.FromSlash(rel))
		data, err := fsutil.ReadFile(src, from, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		dst := filepath.Join(to, filepath.FromSlash(rel))
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := fsutil.WriteAtomic(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
