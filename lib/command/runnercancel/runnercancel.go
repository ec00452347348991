// Package runnercancel is the runner-cancel command: the operator's way to
// stop a run (DESIGN.md decision 12; issue 17). It goes through
// lib/cancel.Request, so a session that is running counts the request as
// the operator's, not as a cancel file the agent created.
package runnercancel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/layout"
)

// Options is the command line of runner-cancel.
type Options struct {
	cli.Chdir
	By   string `default:"runner-cancel" placeholder:"NAME" help:"Who asks, recorded in .runner/cancel and the iteration's agent.json."`
	JSON bool   `name:"json" help:"Print the result as JSON on stdout."`
}

// Main runs runner-cancel and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-cancel", "Ask the run in this repository to stop: a running agent or guard is stopped and its iteration committed as interrupted (no attempt consumed), and the loop stops before the next iteration. Prints cancel=requested by=<name>. Remove "+layout.Cancel+" to continue. Exit 0 requested, 1 refused (run from inside an agent's or a guard's session), 6 the file could not be written.", &Options{}, args, stdin, stdout, stderr)
}

// Result is the --json output.
type Result struct {
	Version int    `json:"version"`
	Cancel  string `json:"cancel"` // requested
	By      string `json:"by"`
	File    string `json:"file"`
}

// Run requests the cancel.
func (o *Options) Run(env *cli.Env) error {
	if err := cancel.Request(env.Dir, o.By); err != nil {
		if errors.Is(err, cancel.Refused) {
			return exit.Errorf(exit.Negative, "%v", err)
		}
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	res := Result{Version: 1, Cancel: "requested", By: o.By, File: layout.Cancel}
	if o.JSON {
		out, _ := json.Marshal(res)
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return nil
	}
	fmt.Fprintf(env.Stdout, "cancel=requested by=%q file=%s\n", res.By, res.File)
	return nil
}
