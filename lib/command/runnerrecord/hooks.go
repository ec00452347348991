package runnerrecord

import (
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/runrecord"
)

// runHook runs the hook name of hooks with r (runrecord.Hooks.Run) in the
// repository root; SIGINT or SIGTERM, held since the command started or
// sent while it runs, stops it.
func runHook(env *cli.Env, r *runrecord.Record, name string, hooks config.Hooks, extra ...string) {
	in := cli.NotifyInterrupt()
	defer in.Stop()
	hooksOf(env, in).Run(r, name, hooks, extra...)
}

// hooksOf runs the record's hooks in the repository root, stopped by in,
// warning on env's stderr.
func hooksOf(env *cli.Env, in *cli.Interrupt) runrecord.Hooks {
	return runrecord.Hooks{Root: env.Dir, Stop: in, Warnf: env.Warnf}
}
