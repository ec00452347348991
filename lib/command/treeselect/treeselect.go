// Package treeselect is the tree-select command: the leftmost open leaf of
// the task tree (seed 000 §4.2), with exit codes 0 open, 2 complete, 3 stuck,
// 7 waiting (every open leaf waits for an operator's answer).
package treeselect

import (
	"fmt"
	"io"
	"slices"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Options is the command line of tree-select.
type Options struct {
	cli.Chdir
	File        string `arg:"" optional:"" placeholder:"FILE|-" help:"Tree file, - for standard input (default .runner/state/tree.json)."`
	JSON        bool   `name:"json" help:"Print the selection as JSON on stdout."`
	StuckPolicy string `name:"stuck-policy" placeholder:"POLICY" help:"How leaves with no attempts left count (default: stuck_policy of .runner/state/config.toml, else stop): stop and decompose end the selection at the first one reached (stuck), skip passes over them and is stuck only when no other leaf is left to work."`
	cli.Get
}

// Main runs tree-select and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("tree-select", "Print the leftmost open leaf of the task tree that does not wait for an operator's answer (under stuck_policy skip, that has attempts left too): status=open id=… path=… next=… attempts=n/m. Exit 0 open, 2 complete, 3 stuck (the line names the leaf), 7 waiting (every open leaf waits: the line names the leftmost), 1 invalid tree. Every value printed matches [A-Za-z0-9._/-], so the line is safe for eval.", &Options{}, args, stdin, stdout, stderr)
}

// Result is the --json output.
type Result struct {
	Version     int    `json:"version"`
	Status      string `json:"status"`
	ID          string `json:"id,omitempty"`
	Path        string `json:"path,omitempty"`
	Next        string `json:"next,omitempty"`
	Title       string `json:"title,omitempty"`
	Attempts    int    `json:"attempts"`
	MaxAttempts int    `json:"max_attempts"`
}

// Validate checks the policy's name.
func (o *Options) Validate() error {
	if o.StuckPolicy != "" && !slices.Contains(tree.StuckPolicies, tree.StuckPolicy(o.StuckPolicy)) {
		return fmt.Errorf("--stuck-policy must be stop, skip or decompose, got %q", o.StuckPolicy)
	}
	return nil
}

// policy is --stuck-policy, else config.toml's stuck_policy.
func (o *Options) policy(env *cli.Env) (tree.StuckPolicy, error) {
	if o.StuckPolicy != "" {
		return tree.StuckPolicy(o.StuckPolicy), nil
	}
	// No environment variable sets stuck_policy: the file alone says it.
	cfg, err := config.Load(env.Abs(layout.Config), func(string) (string, bool) { return "", false })
	if err != nil {
		return "", exit.Errorf(exit.RunnerError, "%v (or give --stuck-policy)", err)
	}
	return tree.StuckPolicy(cfg.StuckPolicy), nil
}

// Run prints the selection.
func (o *Options) Run(env *cli.Env) error {
	sel, err := o.Select(env)
	if sel.Status == "" {
		return err
	}
	if o.JSON || o.Wanted() {
		r := Result{Version: 1, Status: sel.Status}
		if sel.Node != nil {
			r.ID, r.Path, r.Next, r.Title = sel.Node.ID, sel.Path, sel.Node.Next, sel.Node.Title
			r.Attempts, r.MaxAttempts = sel.Node.Attempts, sel.Node.MaxAttempts
		}
		printJSON := o.PrintJSON
		if sel.Status != tree.StatusOpen {
			// The exit code says complete or stuck; a path that only an
			// open selection has (a complete tree has no id) prints nothing.
			printJSON = o.PrintJSONIfAny
		}
		if perr := printJSON(env, r); perr != nil {
			return perr
		}
	} else {
		fmt.Fprintln(env.Stdout, sel)
	}
	return err
}

// Select reads the tree (o.File, else .runner/state/tree.json) and returns
// its selection under the stuck policy. With the selection, an error
// (Silent, its message said on env's stderr) carries exit 2 complete, 3
// stuck or 7 waiting; without one, exit 1 an invalid tree or 6 a runner
// error.
func (o *Options) Select(env *cli.Env) (tree.Selection, error) {
	name := o.File
	if name == "" {
		name = layout.Tree
	}
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(env.Stdin, fsutil.MaxStateFile))
		name = "<stdin>"
	} else {
		var release func()
		data, release, err = fsutil.MapFile(env.Abs(name), env.Dir, 0)
		defer release()
	}
	if err != nil {
		return tree.Selection{}, exit.Errorf(exit.RunnerError, "read %s: %w", name, err)
	}
	root, ps := tree.Load(data)
	if len(ps) > 0 {
		return tree.Selection{}, exit.Errorf(exit.Negative, "%s is invalid (%s, first: %s); run tree-validate for all of them", name, vocab.Plural(len(ps), "error", "errors"), ps[0])
	}
	policy, err := o.policy(env)
	if err != nil {
		return tree.Selection{}, err
	}
	sel := tree.SelectWith(root, policy)
	switch sel.Status {
	case tree.StatusComplete:
		return sel, cli.Silent(exit.Complete)
	case tree.StatusWaiting:
		env.Errorf("waiting: every open leaf waits for an operator's answer, the leftmost '%s' at %s: %s", sel.Node.ID, sel.Path, tree.AnswerHint(sel.Node.ID))
		return sel, cli.Silent(exit.Waiting)
	case tree.StatusStuck:
		// The message names the operator's next step.
		if stuck := tree.Stuck(root); policy == tree.StuckSkip && len(stuck) > 1 {
			env.Errorf("stuck: no leaf is left to work but %s: %s", tree.StuckList(stuck), tree.StuckHint("ID"))
		} else {
			env.Errorf("stuck: node '%s' at %s has no attempts left (%d/%d): %s", sel.Node.ID, sel.Path, sel.Node.Attempts, sel.Node.MaxAttempts, tree.StuckHint(sel.Node.ID))
		}
		return sel, cli.Silent(exit.Stuck)
	}
	return sel, nil
}
