// Package runnercancel is the runner-cancel command: the operator's way to
// stop a run (DESIGN.md decision 12). It goes through
// lib/cancel.Request, so a session that is running counts the request as
// the operator's, not as a cancel file the agent created.
package runnercancel

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/layout"
)

// Options is the command line of runner-cancel.
type Options struct {
	cli.Chdir
	By    string `default:"runner-cancel" placeholder:"NAME" help:"Who asks, recorded in .runner/cancel and the iteration's agent.json."`
	Clear bool   `help:"Withdraw the pending request instead: remove .runner/cancel, so that the next runner-loop or runner-step runs. Prints cancel=cleared by=<who asked> at=<when>, or cancel=none."`
	JSON  bool   `name:"json" help:"Print the result as JSON on stdout."`
}

// Main runs runner-cancel and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-cancel", "Ask the run in this repository to stop: a running agent or guard is stopped and its iteration committed as interrupted (no attempt consumed), and the loop stops before the next iteration. The runner it stops uses the request up as it ends (runner-loop, or runner-step run alone), so the next runner-loop runs; one made while no runner works stops the next at its start. Prints cancel=requested by=<name>. runner-cancel --clear withdraws it (runner-status shows a pending request). Exit 0 requested (or cleared), 1 refused (run from inside an agent's or a guard's session), 6 the file could not be written.", &Options{}, args, stdin, stdout, stderr)
}

// Result is the --json output.
type Result struct {
	Version int    `json:"version"`
	Cancel  string `json:"cancel"` // requested; with --clear: cleared, none
	By      string `json:"by"`     // who asks; with --clear, who had asked ("" when unknown or none)
	File    string `json:"file"`
	// At is when the withdrawn request was made (--clear), "" otherwise.
	At string `json:"at,omitempty"`
}

// Run requests the cancel, or withdraws it.
func (o *Options) Run(env *cli.Env) error {
	if o.Clear {
		return o.clear(env)
	}
	if err := cancel.Request(env.Dir, o.By); err != nil {
		if errors.Is(err, cancel.Refused) {
			return exit.Errorf(exit.Negative, "%v", err)
		}
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	res := Result{Version: 1, Cancel: "requested", By: o.By, File: layout.Cancel}
	if o.JSON {
		return env.PrintJSON(res)
	}
	fmt.Fprintf(env.Stdout, "cancel=requested by=%q file=%s\n", res.By, res.File)
	return nil
}

// clear removes the pending request.
func (o *Options) clear(env *cli.Env) error {
	p, err := cancel.Read(env.Dir)
	if err != nil {
		return exit.Errorf(exit.RunnerError, "read %s: %v", layout.Cancel, err)
	}
	res := Result{Version: 1, Cancel: "none", File: layout.Cancel}
	if p != nil {
		if _, err := cancel.Clear(env.Dir); err != nil {
			return exit.Errorf(exit.RunnerError, "%v (remove it by hand)", err)
		}
		res.Cancel, res.By, res.At = "cleared", p.By, p.At.Format(time.RFC3339)
	}
	if o.JSON {
		return env.PrintJSON(res)
	}
	if p == nil {
		fmt.Fprintln(env.Stdout, "cancel=none")
		return nil
	}
	fmt.Fprintf(env.Stdout, "cancel=cleared by=%q at=%s file=%s\n", res.By, res.At, res.File)
	return nil
}
