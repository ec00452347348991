package runnerinit

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
)

// Base is where runner-start will start the next run (--new): the branch
// or commit checked out, and whether runner-init switched to it (--base).
type Base struct {
	Rev      string `json:"rev"`    // a branch name, or the commit when HEAD is detached
	Commit   string `json:"commit"` // its commit, "" before the first
	Switched bool   `json:"switched"`
	// From is the branch (or commit) runner-init switched from, "" when
	// it did not switch.
	From string `json:"from,omitempty"`
}

// stackNote says, for --new without --base on a run branch, that the new
// run will start from that branch, on top of its run's commits, and how
// to start it from another base.
func (o *Options) stackNote(env *cli.Env, repo *git.Repo) (Base, error) {
	branch, err := repo.CurrentBranch()
	if err != nil {
		return Base{}, exit.Wrap(exit.RunnerError, err)
	}
	b := Base{Rev: branch}
	b.Commit, _ = repo.ResolveCommit("HEAD")
	if branch == "" {
		b.Rev = b.Commit
	}
	run, ok := strings.CutPrefix(branch, layout.BranchPrefix)
	if !ok {
		return b, nil
	}
	suggest := "REV"
	for _, name := range []string{"main", "master"} {
		if ok, _ := repo.BranchExists(name); ok {
			suggest = name
			break
		}
	}
	goalFlag := ""
	if o.Goal != "" {
		goalFlag = " --goal " + o.Goal
	}
	env.Warnf("on run branch %s: runner-start will start the new run from it, on top of run %s's commits; to start it from %s instead: runner-init --new --base %s%s", branch, run, suggest, suggest, goalFlag)
	return b, nil
}

// replaced are the runner files a new goal writes again, or carries
// (config.toml): their uncommitted changes do not hold a switch to the
// base back.
var replaced = []string{layout.Goal, layout.Tree, layout.RunState, layout.Config, layout.Schema, layout.AgentOutputSchema, layout.Gitignore}

// switchBase checks out --base REV (a local branch as itself, another
// commit detached) for the new run to start from, before anything is
// written: the working tree must have no change the switch would lose,
// but to the runner files the new goal writes again (replaced) and new
// files under .runner/. It returns the operator's config.toml as it
// stands here (nil when there is none), which the new goal keeps where REV
// has none.
func (o *Options) switchBase(repo *git.Repo) (Base, []byte, error) {
	commit, err := repo.ResolveCommit(o.Base)
	if err != nil {
		return Base{}, nil, exit.Errorf(exit.Negative, "--base %s: not a commit of this repository: name a branch or commit to start the new run from", o.Base)
	}
	status, err := repo.StatusPorcelain()
	if err != nil {
		return Base{}, nil, exit.Wrap(exit.RunnerError, err)
	}
	for _, e := range status {
		if p := e[3:]; !slices.Contains(replaced, p) && (e[:2] != "??" || !strings.HasPrefix(p, layout.Runner+"/")) {
			return Base{}, nil, exit.Errorf(exit.Negative, "--base %s: the working tree has changes that a switch to it would lose (%s): commit or stash them first", o.Base, p)
		}
	}
	from, err := repo.CurrentBranch()
	if err != nil {
		return Base{}, nil, exit.Wrap(exit.RunnerError, err)
	}
	if from == "" {
		from, _ = repo.ResolveCommit("HEAD")
	}
	config, err := fsutil.ReadFile(filepath.Join(repo.Root(), layout.Config), repo.Root(), 1<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Base{}, nil, exit.Errorf(exit.RunnerError, "read %s: %v", layout.Config, fsutil.Cause(err))
	}
	args := []string{"switch", "--quiet", "--discard-changes"}
	if ok, _ := repo.BranchExists(o.Base); ok {
		args = append(args, o.Base)
	} else {
		args = append(args, "--detach", commit)
	}
	if _, err := repo.Run(args...); err != nil {
		return Base{}, nil, exit.Errorf(exit.RunnerError, "--base %s: switch to it: %v", o.Base, err)
	}
	return Base{Rev: o.Base, Commit: commit, Switched: true, From: from}, config, nil
}

// startFrom is where the new goal's run will start (--new): --base's
// commit, checked out, with the operator's config.toml to carry there;
// else the branch checked out, said when it is a run branch.
func (o *Options) startFrom(env *cli.Env) (*Base, []byte, error) {
	if !o.New {
		return nil, nil, nil
	}
	repo, err := git.OpenRoot(env.Dir)
	if err != nil {
		return nil, nil, exit.Wrap(exit.Negative, err)
	}
	if o.Base != "" {
		b, config, err := o.switchBase(repo)
		return &b, config, err
	}
	b, err := o.stackNote(env, repo)
	return &b, nil, err
}

// carriedKept warns when REV had a config.toml of its own, kept, that
// differs from the one the branch left had (carried).
func carriedKept(env *cli.Env, b *Base, carried []byte) {
	if b == nil || !b.Switched || carried == nil {
		return
	}
	if now, err := os.ReadFile(env.Abs(layout.Config)); err == nil && !bytes.Equal(now, carried) {
		env.Warnf("%s of %s is kept; the one of %s differs (git diff %s %s -- %s shows how, but for changes not committed there)", layout.Config, b.Rev, b.From, b.Rev, b.From, layout.Config)
	}
}
