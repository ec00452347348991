// Package runcheck is what a step needs before it allocates an iteration
// (runner-check, and step-begin before every iteration; DESIGN.md "The
// commands"), checked without running anything: the configuration, the
// agent's executable, the guard's, the cassette, the run budgets, the
// sandbox. A bad configuration so costs no iteration.
//
// Checks is a list of independent checks; another check joins by adding a
// Check to it.
package runcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/guard"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/passcache"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/sandbox"
)

// Context is what the checks read.
type Context struct {
	Root      string        // absolute repository root
	Config    config.Config // config.toml after the RUNNER_* overrides
	ConfigErr error         // why Config could not be loaded; the other checks then pass
	// Network: also the checks that ask the network (NetworkChecks):
	// runner-check's, not those before every step.
	Network bool
}

// Check is one independent check: its name and a function returning its
// problems, one line each, saying what to do (none when fine).
type Check struct {
	Name string
	Run  func(*Context) []string
}

// Checks are run in this order by runner-check and before every step.
var Checks = []Check{
	{"config", checkConfig},
	{"agent", checkAgent},
	{"guard", checkGuard},
	{"cassette", checkCassette},
	{"budgets", checkBudgets},
	{"sandbox", checkSandbox},
}

// NetworkChecks run after Checks when the Context asks for them
// (runner-check): a step does not wait on the network before it begins.
var NetworkChecks = []Check{
	{"endpoint", checkEndpoint},
}

// Result is one check's outcome. A check that could not run (the
// configuration it reads is invalid) is not ok and says why in Skipped.
type Result struct {
	Name     string   `json:"name"`
	OK       bool     `json:"ok"`
	Skipped  string   `json:"skipped,omitempty"`
	Problems []string `json:"problems"`
	// Notes say what a passing check's setting means (an unconfined
	// guard, sessions without a PID namespace); they fail nothing.
	Notes []string `json:"notes,omitempty"`
}

// skippedConfig is why the checks after an invalid configuration do not run.
const skippedConfig = "config invalid"

// Report is the --json output.
type Report struct {
	Version int      `json:"version"`
	OK      bool     `json:"ok"`
	Checks  []Result `json:"checks"`
}

// Load is the Context of the repository at root: config.toml after the
// RUNNER_* overrides, or why it could not be loaded.
func Load(root string) *Context {
	ctx := &Context{Root: root}
	ctx.Config, ctx.ConfigErr = config.Load(filepath.Join(root, layout.Config), os.LookupEnv)
	return ctx
}

// Run runs every check in order; after an invalid configuration the
// checks other than config are skipped.
func (ctx *Context) Run() Report {
	rep := Report{Version: 1, OK: true, Checks: []Result{}}
	checks := Checks
	if ctx.Network {
		checks = append(slices.Clip(checks), NetworkChecks...)
	}
	for _, c := range checks {
		r := Result{Name: c.Name, Problems: []string{}}
		switch {
		case ctx.ConfigErr == nil || c.Name == "config":
			r.Problems = append(r.Problems, c.Run(ctx)...)
			r.OK = len(r.Problems) == 0
			if c.Name == "sandbox" && ctx.ConfigErr == nil {
				r.Notes = sandboxNotes(ctx.Config)
			}
		default:
			r.Skipped = skippedConfig
		}
		rep.Add(r)
	}
	return rep
}

// Add appends r to the report (not ok when r is not).
func (rep *Report) Add(r Result) {
	rep.OK = rep.OK && r.OK
	rep.Checks = append(rep.Checks, r)
}

// Lines is the report as runner-check prints it: per check, "<check>:
// ok" or "<check>: skipped: <why>", then "<check>: note: <note>" and
// "<check>: <problem>" lines.
func (rep Report) Lines() []string {
	var out []string
	for _, r := range rep.Checks {
		switch {
		case r.Skipped != "":
			out = append(out, fmt.Sprintf("%s: skipped: %s", r.Name, r.Skipped))
		case r.OK:
			out = append(out, r.Name+": ok")
		}
		for _, n := range r.Notes {
			out = append(out, fmt.Sprintf("%s: note: %s", r.Name, n))
		}
		for _, p := range r.Problems {
			out = append(out, fmt.Sprintf("%s: %s", r.Name, p))
		}
	}
	return out
}

// checkSandbox: [sandbox] mode = "bwrap" needs bubblewrap able to create
// its namespaces here and a dry run of the agent under the
// session's mounts to pass; mode = "docker" the engine answering and the
// image in it (sessions never pull one).
func checkSandbox(ctx *Context) []string {
	switch ctx.Config.Sandbox.Mode {
	case config.SandboxBwrap:
		if p := sandbox.Check(); len(p) > 0 {
			return TrimName("sandbox", p)
		}
		if err := dryRun(ctx); err != nil {
			return []string{dryRunProblem(ctx, err)}
		}
		return nil
	case config.SandboxDocker:
		return TrimName("sandbox", sandbox.CheckEngine(ctx.Config.Sandbox))
	}
	return nil
}

// dryRunProblem is the problem of a dry run that failed: what failed,
// the lines that say why, and what to do: the directories of the home
// the agent CLI runs from (its link, its script, its interpreter) or its
// output names, to add to [sandbox] readable, when there are any.
func dryRunProblem(ctx *Context, err error) string {
	fix := fmt.Sprintf("list what the agent needs in [sandbox] writable or readable of %s", layout.Config)
	var pe *sandbox.ProbeError
	if errors.As(err, &pe) && pe.Argv != nil {
		paths := append(sandbox.ProgramPaths(ctx.Root, pe.Argv[0]), sandbox.PathsIn(pe.Output)...)
		if add := sandbox.ReadableFor(ctx.Config.Sandbox, ctx.Root, paths); len(add) > 0 {
			fix = sandbox.AddReadable(add, layout.Config)
		}
	}
	return fmt.Sprintf("%v: %s, or set [sandbox] mode = \"none\"", err, fix)
}

// inImage reports whether prog is found in the sandbox's own image rather
// than on this machine: a name without a slash under mode "docker" with an
// image other than the default (which runs the host's /usr).
func inImage(ctx *Context, prog string) bool {
	s := ctx.Config.Sandbox
	return s.Mode == config.SandboxDocker && s.Image != config.DefaultImage && !strings.Contains(prog, "/")
}

// sandboxNotes says what the sandbox settings leave open: a guard
// outside the bwrap sandbox, and sessions without a PID namespace of
// their own (lib/proc: where the kernel refuses one, a session's
// processes are held by a child subreaper and their environment only).
func sandboxNotes(cfg config.Config) []string {
	var notes []string
	if cfg.Sandbox.Confined() && !cfg.Sandbox.Guard {
		notes = append(notes, "the guard runs unconfined ([sandbox] guard = false): the tests and scripts the agent wrote run with your permissions, outside the sandbox, and can do what the sandbox kept the agent from (write git's objects and refs, your home directory, the runner's files); only the checks after the guard stand between them and a pass. Set guard = true to confine it")
	}
	if why := proc.ContainmentHint(); why != "" {
		notes = append(notes, "sessions run without a PID namespace of their own ("+why+"): what a session starts is held by a child subreaper and found by its environment, so a process that clears its environment and outlives a killed agent-exec or guard-run escapes; allow user namespaces, or use [sandbox] mode = \"bwrap\"")
	}
	return notes
}

// dryRun proves the sandbox and the agent together, under the mounts a
// session gets (lib/sandbox Probe), in a scratch iteration directory:
// its output files writable, and an agent CLI's --version. A passed dry
// run is remembered (sandbox.ProbeKey) until the configuration or the
// executable changes.
func dryRun(ctx *Context) error {
	cfg := ctx.Config
	if cfg.Agent.Backend == "replay" {
		return nil
	}
	bin := agent.Executable(cfg.Agent)
	key := sandbox.ProbeKey(cfg, bin)
	if key != "" {
		if _, err := os.Stat(key); err == nil {
			return nil
		}
	}
	iters := filepath.Join(ctx.Root, layout.Iterations)
	if err := os.MkdirAll(iters, 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(iters, ".dry-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := agent.SandboxFiles(cfg.Agent, dir, filepath.Join(dir, iterdir.OutputFile))
	for _, f := range files {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return err
		}
	}
	var writable, readOnly []string
	for _, rel := range sandbox.AgentWritable {
		writable = append(writable, filepath.Join(ctx.Root, filepath.FromSlash(rel)))
	}
	for _, rel := range sandbox.AgentReadOnly {
		readOnly = append(readOnly, filepath.Join(ctx.Root, filepath.FromSlash(rel)))
	}
	box, err := sandbox.New(cfg.Sandbox, ctx.Root, append(writable, files...), readOnly)
	if err != nil {
		return err
	}
	var argv []string
	if cfg.Agent.Backend != "command" && bin != "" {
		argv = []string{bin, "--version"}
	}
	if err := box.Probe(files, argv); err != nil {
		return err
	}
	if key != "" && os.MkdirAll(filepath.Dir(key), 0o755) == nil {
		os.WriteFile(key, []byte("ok\n"), 0o644)
	}
	return nil
}

// TrimName drops the "<name>: " a problem from another package starts
// with: runner-check prints the check's name before each problem.
func TrimName(name string, problems []string) []string {
	out := make([]string, 0, len(problems))
	for _, p := range problems {
		out = append(out, strings.TrimPrefix(p, name+": "))
	}
	return out
}

func checkConfig(ctx *Context) []string {
	if ctx.ConfigErr == nil {
		return nil
	}
	var es config.Errors
	if errors.As(ctx.ConfigErr, &es) {
		var out []string
		for _, e := range es {
			out = append(out, e.Error()+" (fix "+layout.Config+")")
		}
		return out
	}
	return []string{ctx.ConfigErr.Error() + " (fix " + layout.Config + ")"}
}

func checkAgent(ctx *Context) []string {
	a := ctx.Config.Agent
	if a.Backend == "replay" {
		return nil
	}
	bin := agent.Executable(a)
	if bin == "" {
		return []string{fmt.Sprintf("the %s backend needs an executable: set [agent] bin in %s or RUNNER_AGENT_BIN", a.Backend, layout.Config)}
	}
	if inImage(ctx, bin) {
		return nil
	}
	if err := findExecutable(ctx.Root, bin); err != nil {
		return []string{fmt.Sprintf("the %s backend's executable %s: %v: install it, or set [agent] bin in %s (or RUNNER_AGENT_BIN) to its path", a.Backend, bin, err, layout.Config)}
	}
	// An agent CLI's version (provenance) is asked here, once per binary,
	// so that no iteration's budget pays for it (lib/agent/version.go).
	if a.Backend != "command" {
		if _, ok := agent.CachedCLIVersion(bin); !ok {
			agent.ProbeCLIVersion(context.Background(), bin, versionTimeout)
		}
	}
	// Settings the CLI refuses would end the first session as a config
	// error: a dry run finds them now, where the CLI has one (cached
	// while nothing it reads changes, lib/agent/settings.go).
	if p := agent.CheckSettings(context.Background(), a, ctx.Root, versionTimeout); p != "" {
		return []string{p}
	}
	return nil
}

// versionTimeout bounds runner-check's question of an agent CLI's version:
// generous, since no iteration waits (a slow CLI on a busy machine).
const versionTimeout = 2 * time.Minute

func checkGuard(ctx *Context) []string {
	prog := ctx.Config.Guard.Command[0]
	if ctx.Config.Sandbox.ConfinesGuard() && inImage(ctx, prog) {
		return nil
	}
	if err := findExecutable(ctx.Root, prog); err != nil {
		return []string{fmt.Sprintf("the guard's program %s: %v: install it, or set [guard] command in %s", prog, err, layout.Config)}
	}
	if p := checkJust(ctx.Root, ctx.Config.Guard.Command); len(p) > 0 {
		return p
	}
	return checkGuardStarts(ctx)
}

// checkGuardStarts is the guard's dry run: its program (a script of the
// work tree: its interpreter) started with --version where the guard
// will run, confined as it will be, in its environment
// (guard.Starter.ProgramStarts). A pass is remembered while the
// program's files, the sandbox's settings and PATH stay the same.
func checkGuardStarts(ctx *Context) []string {
	prog := ctx.Config.Guard.Command[0]
	key := passcache.New("guard-start").Text(ctx.Root, prog, os.Getenv("PATH"), fmt.Sprintf("%+v", ctx.Config.Sandbox))
	for _, p := range sandbox.ProgramPaths(ctx.Root, prog) {
		key.File(p)
	}
	if _, passed := key.Get(); passed {
		return nil
	}
	s := guard.Starter{Root: ctx.Root, Config: ctx.Config}
	if u := s.ProgramStarts(context.Background()); u != nil {
		return []string{"the guard's program " + u.Message()}
	}
	key.Put(nil)
	return nil
}

func checkCassette(ctx *Context) []string {
	a := ctx.Config.Agent
	if a.Cassette == "" {
		if a.Backend == "replay" {
			return []string{fmt.Sprintf("the replay backend needs a cassette: set [agent] cassette in %s or RUNNER_AGENT_CASSETTE", layout.Config)}
		}
		return nil
	}
	dir, err := agent.CassetteDir(ctx.Root, a.Cassette, 1)
	if err != nil {
		return []string{err.Error()}
	}
	dir = filepath.Dir(dir)
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return []string{fmt.Sprintf("the cassette %s is not a directory: set [agent] cassette to a directory", a.Cassette)}
	case errors.Is(err, fs.ErrNotExist) && a.Backend == "replay":
		return []string{fmt.Sprintf("the cassette %s does not exist: point [agent] cassette (or RUNNER_AGENT_CASSETTE) at a recorded one", a.Cassette)}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return []string{fmt.Sprintf("the cassette %s: %v", a.Cassette, err)}
	}
	return nil
}

func checkBudgets(ctx *Context) []string {
	a := ctx.Config.Agent
	tokens, cost := agent.Measures(a.Backend)
	var out []string
	if a.MaxTokens > 0 && !tokens {
		out = append(out, fmt.Sprintf("max_tokens = %d, but the %s backend reports no tokens: set max_tokens = 0, or use a backend that reports them", a.MaxTokens, a.Backend))
	}
	if a.MaxCostUSD > 0 && !cost {
		_, priced := a.Price(a.Model)
		switch {
		case !tokens:
			out = append(out, fmt.Sprintf("max_cost_usd = %v, but the %s backend reports no tokens or cost: set max_cost_usd = 0", a.MaxCostUSD, a.Backend))
		case a.Model == "":
			out = append(out, fmt.Sprintf("max_cost_usd = %v, but the %s backend reports no cost: set [agent] model and give its price in [agent] prices (US dollars per million tokens), or set max_cost_usd = 0", a.MaxCostUSD, a.Backend))
		case !priced:
			out = append(out, fmt.Sprintf("max_cost_usd = %v, but the %s backend reports no cost and [agent] prices has none for %q: add %q = {input = …, cached_input = …, output = …} to it (US dollars per million tokens), or set max_cost_usd = 0", a.MaxCostUSD, a.Backend, a.Model, a.Model))
		}
	}
	return out
}

// findExecutable finds prog as a process started in root would: a name
// with a slash relative to root, any other name on PATH.
func findExecutable(root, prog string) error {
	if !strings.Contains(prog, "/") {
		_, err := exec.LookPath(prog)
		if err != nil {
			return errors.New("not found on PATH")
		}
		return nil
	}
	if !filepath.IsAbs(prog) {
		prog = filepath.Join(root, prog)
	}
	st, err := os.Stat(prog)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case err != nil:
		return err
	case st.IsDir():
		return errors.New("is a directory")
	case st.Mode()&0o111 == 0:
		return errors.New("not executable")
	}
	return nil
}
