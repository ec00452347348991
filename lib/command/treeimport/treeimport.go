// Package treeimport is the tree-import command: a plan the user already
// has (a Markdown checklist or heading outline, a PRD with numbered
// requirements, spec-kit's tasks.md, ralph's prd.json, a GitHub issue's
// JSON) as a valid task tree on stdout (lib/plan).
package treeimport

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plan"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Options is the command line of tree-import.
type Options struct {
	cli.Chdir
	File        string `arg:"" optional:"" default:"-" placeholder:"FILE|-" help:"The plan; - (the default) reads standard input."`
	Format      string `enum:"auto,markdown,prd-json,github-issue" default:"auto" env:"TREELOOP_IMPORT_FORMAT" help:"The plan's format: auto (JSON with userStories is a prd.json, JSON with title and body a GitHub issue, anything else Markdown), markdown (a checklist, a heading outline, a PRD, spec-kit's tasks.md), prd-json (ralph's prd.json), github-issue (gh issue view --json title,body)."`
	RootID      string `name:"root-id" default:"root" placeholder:"ID" help:"The root node's id; its descendants are <parent>.<n>."`
	Title       string `placeholder:"TEXT" help:"The root's title when the plan has no heading of its own (default: the file's name, Plan for standard input)."`
	MaxAttempts int    `name:"max-attempts" placeholder:"N" help:"max_attempts of every node (default: max_attempts_default of .runner/state/config.toml, else 3)."`
	DryRun      bool   `name:"dry-run" help:"Print the tree as an outline for review (id, next, title, goal's first line, acceptance; then the assumptions and the rejected lines) instead of its JSON."`
	Strict      bool   `help:"Exit 1 when a line of the plan was rejected."`
	JSON        bool   `name:"json" help:"Print {\"version\": 1, \"format\", \"tree\", \"assumptions\", \"rejected\"} instead of the tree alone."`
	cli.Get
}

// Main runs tree-import and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("tree-import", "Turn a plan into a task tree on stdout: nested items become children in order, sub-bullets and Acceptance sections acceptance criteria, each node gets its next, and checked items stay open (only a green guard passes a node) but are listed as assumptions. Every line left out is reported on stderr with its number. Deterministic. Exit 0 imported, 1 nothing to import (or a rejected line with --strict).", &Options{}, args, stdin, stdout, stderr)
}

// Result is the --json output.
type Result struct {
	Version     int         `json:"version"`
	Format      string      `json:"format"`
	Tree        *tree.Node  `json:"tree"`
	Assumptions []plan.Note `json:"assumptions"`
	Rejected    []plan.Note `json:"rejected"`
}

// Run imports the plan.
func (o *Options) Run(env *cli.Env) error {
	data, name, err := o.read(env)
	if err != nil {
		return err
	}
	maxAttempts := o.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = config.Default().MaxAttemptsDefault
		if cfg, err := config.Load(env.Abs(layout.Config), os.LookupEnv); err == nil {
			maxAttempts = cfg.MaxAttemptsDefault
		} else if !errors.Is(err, fs.ErrNotExist) {
			env.Warnf("%s: %v (max_attempts %d)", layout.Config, err, maxAttempts)
		}
	}
	p, root, err := plan.Import(data, o.Format, o.title(name), o.RootID, maxAttempts)
	if err != nil {
		return exit.Errorf(exit.Negative, "%s: %v", name, err)
	}
	for _, r := range p.Rejected {
		env.Warnf("%s: line %d: rejected: %s: %s", name, r.Line, r.Reason, r.Text)
	}
	switch {
	case o.DryRun:
		fmt.Fprint(env.Stdout, p.Outline(root))
	case o.JSON || o.Wanted():
		res := Result{Version: 1, Format: p.Format, Tree: root, Assumptions: p.Assumptions, Rejected: p.Rejected}
		if res.Assumptions == nil {
			res.Assumptions = []plan.Note{}
		}
		if res.Rejected == nil {
			res.Rejected = []plan.Note{}
		}
		if err := o.PrintJSON(env, res); err != nil {
			return err
		}
	default:
		if _, err := env.Stdout.Write(tree.Encode(root)); err != nil {
			return exit.Errorf(exit.RunnerError, "write the tree: %v", err)
		}
		if n := len(p.Assumptions); n > 0 {
			what := "is an open node"
			if n != 1 {
				what = "are open nodes"
			}
			env.Warnf("%s of the plan %s, listed as assumptions (see --dry-run)", vocab.Plural(n, "checked item", "checked items"), what)
		}
	}
	if o.Strict && len(p.Rejected) > 0 {
		return exit.Errorf(exit.Negative, "%d line(s) of %s rejected (--strict)", len(p.Rejected), name)
	}
	return nil
}

// read reads the plan from the file or standard input, at most 16 MiB.
func (o *Options) read(env *cli.Env) ([]byte, string, error) {
	const limit = 16 << 20
	if o.File == "-" {
		data, err := io.ReadAll(io.LimitReader(env.Stdin, limit+1))
		if err != nil {
			return nil, "", exit.Errorf(exit.RunnerError, "read standard input: %v", err)
		}
		if len(data) > limit {
			return nil, "", exit.Errorf(exit.Negative, "the plan is larger than %d bytes", limit)
		}
		return data, "<stdin>", nil
	}
	data, err := fsutil.ReadFile(env.Abs(o.File), "", limit)
	if err != nil {
		return nil, "", exit.Errorf(exit.Negative, "read %s: %v", o.File, fsutil.Cause(err))
	}
	return data, o.File, nil
}

// title is the root's title for a plan without a heading.
func (o *Options) title(name string) string {
	if o.Title != "" {
		return o.Title
	}
	if name == "<stdin>" {
		return "Plan"
	}
	base := filepath.Base(name)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
