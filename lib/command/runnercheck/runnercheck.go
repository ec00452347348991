// Package runnercheck is the runner-check command: what a step needs before
// it allocates an iteration (lib/runcheck; DESIGN.md "The commands"),
// checked without running anything (but the guard once with --guard).
// step-begin runs the same checks before every iteration, so a bad
// configuration costs no iteration.
package runnercheck

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/guard"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runcheck"
	"github.com/treeloop/treeloop/lib/sandbox"
)

// Options is the command line of runner-check.
type Options struct {
	cli.Chdir
	JSON  bool `name:"json" help:"Print every check and its problems as JSON."`
	Guard bool `name:"guard" help:"Also run the guard once (the guard baseline) and report whether the repository starts green."`
	// BuildImage makes the default image of [sandbox] mode = "docker".
	BuildImage bool `name:"build-image" help:"Build the default image of [sandbox] mode = \"docker\" (treeloop-host: an empty skeleton in which sessions run this machine's /usr and /etc, read-only) in [sandbox] engine, replacing an older one, then check."`
	cli.Get
}

// Main runs runner-check and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-check", "Check what a step needs before it allocates an iteration: the configuration (config.toml and RUNNER_* overrides), the agent's executable, the guard's (its program started with --version where the guard will run), the cassette, the run budgets, the sandbox (the agent CLI started under it), and the agent CLI's key and endpoint (asked over HTTP); with --guard the guard baseline. Prints one line per check (\"<check>: ok\" or one line per problem, saying what to do). Exit 0 fine, 1 a problem found.", &Options{}, args, stdin, stdout, stderr)
}

// Run runs every check.
func (o *Options) Run(env *cli.Env) error {
	repo, err := git.OpenRoot(env.Dir)
	if err != nil {
		return exit.Wrap(exit.Negative, err)
	}
	root := repo.Root()
	if _, err := os.Stat(filepath.Join(root, layout.Runner)); err != nil {
		return exit.Errorf(exit.Negative, "no %s in %s: run runner-init --goal GOAL.md, then runner-start", layout.Runner, root)
	}
	ctx := runcheck.Load(root)
	ctx.Network = true
	if o.BuildImage {
		if ctx.ConfigErr != nil {
			return exit.Errorf(exit.Negative, "build the image: %v (fix %s)", ctx.ConfigErr, layout.Config)
		}
		id, err := sandbox.BuildImage(ctx.Config.Sandbox)
		if err != nil {
			return exit.Errorf(exit.Negative, "build the image: %v", err)
		}
		env.Errorf("built %s in %s (%s)", config.DefaultImage, ctx.Config.Sandbox.Engine, id)
	}
	rep := ctx.Run()
	if o.Guard && ctx.ConfigErr == nil {
		// The guard baseline: the one check that runs something.
		env.Dir = root
		r := runcheck.Result{Name: "guard-baseline", Problems: runcheck.TrimName("guard", guard.CheckBaseline(env, ctx.Config))}
		r.OK = len(r.Problems) == 0
		rep.Add(r)
	}
	if o.JSON || o.Wanted() {
		if err := o.PrintJSON(env, rep); err != nil {
			return err
		}
	} else {
		for _, l := range rep.Lines() {
			fmt.Fprintln(env.Stdout, l)
		}
	}
	if !rep.OK {
		return cli.Silent(exit.Negative)
	}
	return nil
}
