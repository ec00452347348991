// Package runnerinit is the runner-init command: it scaffolds .runner/ in a
// git repository (seed 000 §3, DESIGN.md "The commands"): GOAL.md, the state
// files, the deployed schema copies, the default config and the .gitignore
// that keeps context/ and iterations/ out of git. It is idempotent: a file
// that exists is kept, except the schema copies, which always equal the
// embedded schemas (DESIGN.md decision 10).
package runnerinit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/ecosystem"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/goal"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/sandbox"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/schemas"
)

// Options is the command line of runner-init.
type Options struct {
	cli.Chdir
	Goal       string `placeholder:"FILE" help:"Copy FILE to .runner/GOAL.md (refused when a different GOAL.md exists). Without it, an existing GOAL.md is kept and a missing one gets a template."`
	RootID     string `name:"root-id" default:"root" placeholder:"ID" help:"Id of the tree's root node."`
	Next       string `enum:"decompose,execute" default:"decompose" help:"How the agent first works the root: decompose (split the goal) or execute (do it in one go)."`
	New        bool   `name:"new" help:"Start a new goal: GOAL.md becomes --goal's file (or the current GOAL.md without its run id), and the tree and run_state.json start over from it. The old ones stay in git history and the old run's records; runner-start then starts a new run, from the branch checked out: on a run branch (runner/<id>) that is on top of the old run's commits, which runner-init says; --base starts it elsewhere."`
	Base       string `placeholder:"REV" help:"With --new: start the new run from REV (a branch, checked out as itself, or a commit, detached), not from the branch checked out. Refused while the working tree has changes the switch would lose (but to the runner files the new goal writes again); config.toml comes along where REV has none. Prints switched to <REV> <commit>."`
	Plan       string `placeholder:"FILE" help:"Start the tree from a plan, as tree-import FILE reads it (a Markdown checklist or heading outline, a PRD, spec-kit's tasks.md, ralph's prd.json, a GitHub issue's JSON): GOAL.md is the plan's root unless --goal is given, and the plan's checked items go to assumptions.md. Refused when a different tree.json exists (--new starts over)."`
	PlanFormat string `name:"plan-format" enum:"auto,markdown,prd-json,github-issue" default:"auto" help:"The plan's format, as tree-import's --format."`
	Sandbox    string `enum:"auto,bwrap,docker,none" default:"auto" env:"RUNNER_SANDBOX" help:"[sandbox] mode of a new config.toml: auto (bwrap when bubblewrap is installed and works here, else none), bwrap, docker (a container per session: runner-check --build-image makes its default image) or none."`
	Agent      string `placeholder:"BACKEND" env:"RUNNER_AGENT" help:"[agent] backend of a new config.toml (codex, claude, opencode, gemini, command), with the paths its CLI writes in [sandbox] writable."`
	Guard      string `placeholder:"COMMAND" help:"[guard] command of a new config.toml, split as a POSIX shell splits words (quotes and backslashes, no expansion), instead of the test runner runner-init finds: [guard] results is auto when the command is seen to report tests by name ($RUNNER_TEST_RESULTS, go test -json, cargo test)."`
	JSON       bool   `name:"json" help:"Print what was created and kept as JSON."`
	cli.Get

	guard   []string           // --guard, split
	choices []ecosystem.Choice // what newConfig chose
	hints   []string           // what it could not tell
}

// Main runs runner-init and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("runner-init", "Scaffold .runner/ (GOAL.md, tree, config, schemas, run state, .gitignore) in a git repository. Idempotent: existing files are kept. Then run runner-start.", &Options{}, args, stdin, stdout, stderr)
}

// gitignore keeps the local-only directories out of git (seed 000 §3.3).
const gitignore = `# Local-only: rewritten every iteration (context/) or kept as logs (iterations/, runs/).
context/
iterations/
runs/
lock
cancel
# Operators' answers queued while a runner works (tree-edit answer).
answers/
# Runs in worktrees of their own (runner-start --worktree).
worktrees/
`

type file struct {
	rel  string
	data func() ([]byte, error)
	// refresh rewrites the file when it differs (the schema copies; with
	// --new the goal, the tree and the run state).
	refresh bool
}

// Report lists the files runner-init created, kept and refreshed, and
// the choices it wrote into a new config.toml (none when it kept one).
type Report struct {
	Created   []string           `json:"created"`
	Kept      []string           `json:"kept"`
	Refreshed []string           `json:"refreshed"`
	Choices   []ecosystem.Choice `json:"choices"`
	Hints     []string           `json:"hints"`
	// Base is where runner-start will start the new run (--new only).
	Base *Base `json:"base,omitempty"`
}

// Validate checks flag combinations.
func (o *Options) Validate() error {
	if o.Base != "" && !o.New {
		return errors.New("--base REV starts a new goal's run from REV: give it with --new")
	}
	return nil
}

// Run scaffolds .runner/.
func (o *Options) Run(env *cli.Env) error {
	if !tree.ValidID(o.RootID) {
		return exit.Errorf(exit.Usage, "--root-id %q does not match %s", o.RootID, tree.IDPattern)
	}
	if o.Guard != "" {
		g, err := config.SplitArgs(o.Guard)
		switch {
		case err != nil:
			return exit.Errorf(exit.Usage, "--guard %q: give the command as a shell would split it, its program first (%v)", o.Guard, err)
		case len(g) == 0 || g[0] == "":
			return exit.Errorf(exit.Usage, "--guard %q: give the command as a shell would split it, its program first", o.Guard)
		}
		o.guard = g
	}
	if _, err := git.OpenRoot(env.Dir); err != nil {
		return exit.Wrap(exit.Negative, err)
	}
	cfg, err := config.Load(env.Abs(layout.Config), os.LookupEnv)
	if err != nil {
		return exit.Wrap(exit.Negative, err)
	}
	var imp *imported
	if o.Plan != "" {
		if imp, err = o.importPlan(env, cfg); err != nil {
			return err
		}
	}
	goalData, err := o.goalBytes(env, imp)
	if err != nil {
		return err
	}
	doc, err := goal.Parse(goalData)
	if err != nil {
		return exit.Errorf(exit.Negative, "%s: %v", layout.Goal, err)
	}
	if o.New {
		// A new goal is a new run: runner-start gives it a new id.
		doc.RemoveID()
		goalData = doc.Bytes()
	}
	base, carried, err := o.startFrom(env)
	if err != nil {
		return err
	}
	files := o.files(env, cfg, imp, doc, goalData, carried)
	rep := Report{Base: base}
	for _, f := range files {
		if err := o.write(env, f, imp != nil, &rep); err != nil {
			return err
		}
	}
	carriedKept(env, base, carried)
	if slices.Contains(rep.Created, layout.Config) {
		rep.Choices, rep.Hints = o.choices, o.hints
	}
	o.tell(env, rep)
	if o.JSON || o.Wanted() {
		if rep.Choices == nil {
			rep.Choices = []ecosystem.Choice{}
		}
		for _, l := range []*[]string{&rep.Created, &rep.Kept, &rep.Refreshed, &rep.Hints} {
			if *l == nil {
				*l = []string{}
			}
		}
		return o.PrintJSON(env, rep)
	}
	if b := rep.Base; b != nil && b.Switched {
		fmt.Fprintf(env.Stdout, "switched to %s %s\n", b.Rev, b.Commit)
	}
	for _, p := range rep.Created {
		fmt.Fprintf(env.Stdout, "created %s\n", p)
	}
	for _, p := range rep.Refreshed {
		fmt.Fprintf(env.Stdout, "refreshed %s\n", p)
	}
	for _, p := range rep.Kept {
		fmt.Fprintf(env.Stdout, "kept %s\n", p)
	}
	return nil
}

// write creates f, keeps it, or refreshes it (f.refresh), and says which
// in rep. With a plan (plan), a tree.json that exists and differs from the
// plan's is refused.
func (o *Options) write(env *cli.Env, f file, plan bool, rep *Report) error {
	path := env.Abs(f.rel)
	if err := fsutil.InsideRoot(path, env.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exit.Errorf(exit.Negative, "%s: %v", f.rel, err)
	}
	old, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exit.Errorf(exit.RunnerError, "read %s: %v", f.rel, fsutil.Cause(err))
	}
	data, err := f.data()
	if err != nil {
		return err
	}
	switch {
	case exists && plan && f.rel == layout.Tree && !f.refresh && !bytes.Equal(old, data):
		return planConflict(o.Plan)
	case exists && (!f.refresh || bytes.Equal(old, data)):
		rep.Kept = append(rep.Kept, f.rel)
		return nil
	case exists:
		rep.Refreshed = append(rep.Refreshed, f.rel)
	default:
		rep.Created = append(rep.Created, f.rel)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return exit.Errorf(exit.RunnerError, "create %s: %v", filepath.Dir(f.rel), fsutil.Cause(err))
	}
	if err := fsutil.WriteAtomic(path, data, 0o644); err != nil {
		return exit.Errorf(exit.RunnerError, "write %s: %v", f.rel, fsutil.Cause(err))
	}
	return nil
}

// goalBytes is the GOAL.md to write: --goal's file, the plan's root, the
// existing GOAL.md, or the template.
func (o *Options) goalBytes(env *cli.Env, imp *imported) ([]byte, error) {
	existing, err := os.ReadFile(env.Abs(layout.Goal))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, exit.Errorf(exit.RunnerError, "read %s: %v", layout.Goal, fsutil.Cause(err))
	}
	if o.Goal == "" && imp != nil {
		data := imp.goal()
		if existing != nil && !o.New && !bytes.Equal(goalText(existing), data) {
			return nil, exit.Errorf(exit.Negative, "%s exists and differs from the root of %s: edit it, give --goal, or start over with runner-init --new --plan %s", layout.Goal, o.Plan, o.Plan)
		}
		return data, nil
	}
	if o.Goal == "" {
		if existing != nil {
			return existing, nil
		}
		return []byte(goal.Template), nil
	}
	data, err := fsutil.ReadFile(env.Abs(o.Goal), "", 1<<20)
	if err != nil {
		return nil, exit.Errorf(exit.Negative, "--goal %s: %v: give the path of your goal file (Markdown, a \"# \" heading first)", o.Goal, fsutil.Cause(err))
	}
	if existing != nil && !o.New && !bytes.Equal(existing, data) {
		return nil, exit.Errorf(exit.Negative, "%s exists and differs from %s: edit it, or start a new goal with runner-init --new --goal %s", layout.Goal, o.Goal, o.Goal)
	}
	return data, nil
}

// rootTree is the initial tree: one root leaf holding the goal and its
// acceptance criteria (the template's too: runner-start refuses to start on it, and takes the goal
// written in its place).
func rootTree(doc goal.Doc, id, next string, maxAttempts int) ([]byte, error) {
	title, body, acceptance, err := doc.Root()
	if err != nil && !errors.Is(err, goal.ErrTemplate) {
		return nil, exit.Errorf(exit.Negative, "%s: %v", layout.Goal, err)
	}
	root := &tree.Node{
		ID: id, Title: title, Goal: body, Acceptance: acceptance, Next: next,
		MaxAttempts: maxAttempts, Children: []*tree.Node{},
	}
	data := tree.Encode(root)
	if _, ps := tree.Load(data); len(ps) > 0 {
		return nil, exit.Errorf(exit.Negative, "the initial tree would be invalid: %v", ps)
	}
	return data, nil
}

// newConfig is the default config.toml with runner-init's choices: the
// options' backend and sandbox (DESIGN.md decision 19: bubblewrap where
// it works), and what lib/ecosystem finds about the repository and the
// programs the guard and the agent run (DESIGN.md decision 26). A
// config.toml that exists is kept as it is, and nothing is looked for.
func (o *Options) newConfig(env *cli.Env, cfg config.Config) ([]byte, error) {
	if data, err := os.ReadFile(env.Abs(layout.Config)); err == nil {
		return data, nil
	}
	c := config.Choices{Mode: o.Sandbox, Backend: o.Agent}
	why := "--sandbox or RUNNER_SANDBOX"
	if c.Mode == "auto" {
		c.Mode, why = config.SandboxNone, "bubblewrap works here"
		if problems := sandbox.Check(); len(problems) == 0 {
			c.Mode = config.SandboxBwrap
		} else {
			why = strings.TrimPrefix(problems[0], "sandbox: ")
		}
	}
	if c.Backend == "" {
		c.Backend = "command"
	}
	if _, err := agent.New(c.Backend); err != nil {
		return nil, exit.Errorf(exit.Usage, "--agent %s: %v", c.Backend, err)
	}
	c.Writable = agent.SandboxHome(c.Backend)
	opts := ecosystem.Options{Guard: o.guard}
	if exe := agent.Executable(config.Agent{Backend: c.Backend, Bin: cfg.Agent.Bin}); exe != "" {
		opts.Agents = []string{exe}
	}
	home, _ := os.UserHomeDir()
	plan := ecosystem.Detect(ecosystem.Env{Root: env.Dir, Home: home, Getenv: os.Getenv, Run: ask}, opts)
	c.Guard, c.Results, c.Witness, c.Protected, c.Readable = plan.Guard, plan.Results, plan.Witness, plan.Protected, plan.Readable
	o.choices = append(plan.Choices,
		ecosystem.Choice{Key: "sandbox", Value: c.Mode, Why: why},
		ecosystem.Choice{Key: "agent", Value: c.Backend, Why: map[bool]string{true: "--agent", false: "the default: any program, [agent] bin or RUNNER_AGENT_BIN"}[o.Agent != ""]})
	o.hints = plan.Hints
	return config.WithChoices(config.DefaultTOML(), c), nil
}

// askTimeout bounds a program runner-init asks (ask).
const askTimeout = 20 * time.Second

// ask runs argv in dir for its output (whether an interpreter imports
// pytest, where go keeps its modules), within askTimeout, its input
// empty and its errors dropped.
func ask(dir string, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), askTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	// go env answers with the local toolchain, never one it would
	// download first for a go.mod that asks for a newer one.
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	return string(out), err
}

// tell prints each choice written into a new config.toml and what could
// not be told, one line each on stderr.
func (o *Options) tell(env *cli.Env, rep Report) {
	for _, c := range rep.Choices {
		env.Errorf("%s: %s (%s)", c.Key, c.Value, c.Why)
	}
	for _, h := range rep.Hints {
		env.Warnf("%s", h)
	}
}

// goalText is a GOAL.md without its front matter (runner-start adds the
// run id there), to compare with the goal a plan gives.
func goalText(data []byte) []byte {
	doc, err := goal.Parse(data)
	if err != nil {
		return data
	}
	return doc.Body
}

// files are the files runner-init writes, each with how to make it and
// whether it is written again over an existing one.
func (o *Options) files(env *cli.Env, cfg config.Config, imp *imported, doc goal.Doc, goalData, carried []byte) []file {
	return []file{
		// --new starts the goal, the tree and the run state over.
		{layout.Goal, func() ([]byte, error) { return goalData, nil }, o.New},
		{layout.Config, func() ([]byte, error) {
			if carried != nil {
				return carried, nil
			}
			return o.newConfig(env, cfg)
		}, false},
		{layout.Tree, func() ([]byte, error) {
			if imp != nil {
				return imp.tree(doc)
			}
			return rootTree(doc, o.RootID, o.Next, cfg.MaxAttemptsDefault)
		}, o.New},
		{layout.RunState, func() ([]byte, error) { return runstate.Encode(runstate.New("")), nil }, o.New},
		{layout.Schema, func() ([]byte, error) { return schemas.TaskTreeV1, nil }, true},
		{layout.AgentOutputSchema, func() ([]byte, error) { return schemas.AgentOutputV1, nil }, true},
		{layout.Assumptions, func() ([]byte, error) {
			if imp != nil {
				return imp.assumptions(env, o.Plan)
			}
			return []byte(assumptionsHeader), nil
		}, imp != nil},
		{layout.Questions, func() ([]byte, error) {
			return []byte("# Questions\n\nThe agent may append open questions for a human here; the runner keeps them.\n"), nil
		}, false},
		{layout.Gitignore, func() ([]byte, error) { return []byte(gitignore), nil }, false},
	}
}
