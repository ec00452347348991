// Package stepctx loads what the commands working inside one iteration
// (context-write, agent-exec, guard-run) read first: the iteration
// directory's begin.json and the repository's config.toml with the
// environment overrides applied.
package stepctx

import (
	"os"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// Iteration is an open iteration.
type Iteration struct {
	Dir    string        // absolute iteration directory
	Begin  iterdir.Begin // its begin.json
	Config config.Config // config.toml after RUNNER_* overrides
}

// Load reads the iteration at iter (relative to the -C directory). Errors
// carry the runner-error exit code.
func Load(env *cli.Env, iter string) (Iteration, error) {
	it := Iteration{Dir: env.Abs(iter)}
	var err error
	if it.Begin, err = iterdir.LoadBegin(it.Dir); err != nil {
		return it, exit.Wrap(exit.RunnerError, err)
	}
	if it.Config, err = config.Load(env.Abs(layout.Config), os.LookupEnv); err != nil {
		return it, exit.Wrap(exit.RunnerError, err)
	}
	return it, nil
}
