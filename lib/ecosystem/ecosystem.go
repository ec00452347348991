// Package ecosystem tells what a repository is made of (DESIGN.md
// decision 26) for runner-init: Python (pytest, in a project virtual
// environment or through uv, poetry, pdm or hatch), JavaScript and
// TypeScript (vitest, jest or mocha, installed by npm, pnpm, yarn or bun),
// Rust (cargo), Go, and a justfile's or Makefile's own check. From that it
// chooses the guard that runs the project's tests and reports them by
// name ($RUNNER_TEST_RESULTS, DESIGN.md decision 24), the witness that
// runs only a node's test files, the test infrastructure to protect
// (DESIGN.md decision 25; dependency manifests stay the agent's), and the
// places under the home directory the sandbox must show for the guard's
// and the agent's programs to start (pyenv, nvm, fnm, volta, asdf, mise,
// an npm prefix, ~/.local/bin, ~/.cargo/bin and ~/.rustup). Every choice
// comes with why, for runner-init to print.
package ecosystem

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/layout"
)

// The ecosystems Detect knows.
const (
	Python     = "python"
	JavaScript = "javascript"
	Rust       = "rust"
	Go         = "go"
)

// Env is where Detect looks.
type Env struct {
	Root   string              // the repository's root, absolute
	Home   string              // the home directory, absolute ("" when none)
	Getenv func(string) string // the environment (PATH, PYENV_ROOT, …)
	// Run runs argv in dir for a short answer on stdout (whether an
	// interpreter imports pytest); nil runs nothing, and what it would
	// have told is left unknown.
	Run func(dir string, argv ...string) (string, error)
}

// Options are what the user said on runner-init's command line.
type Options struct {
	// Guard is --guard: the guard's argv, chosen by the user (nil: detect).
	Guard []string
	// Agents are the agent CLIs' executables (names looked up on PATH, or
	// paths), whose files the sandbox must show.
	Agents []string
}

// Choice is one thing Detect chose, for a line of runner-init's output:
// "<Key>: <Value> (<Why>)".
type Choice struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Why   string `json:"why"`
}

// Plan is what Detect chose. Empty fields keep config.toml's defaults.
type Plan struct {
	Ecosystem string   // one of the constants, "" when none was found
	Guard     []string // [guard] command; nil: the default (just ci)
	Results   string   // [guard] results: config.ResultsAuto or config.ResultsOff
	Witness   []string // [guard] witness; nil: the guard's command
	// Protected is added to protected_paths: the test infrastructure, and
	// the Makefile a make guard runs.
	Protected []string
	Readable  []string // [sandbox] readable, as "~/…" paths
	Choices   []Choice // what was chosen and why, in order
	// Hints say what Detect could not tell and what to set, one line each.
	Hints []string
}

// choose records a choice.
func (p *Plan) choose(key, value, why string) {
	p.Choices = append(p.Choices, Choice{Key: key, Value: value, Why: why})
}

// hint records something Detect could not tell.
func (p *Plan) hint(format string) { p.Hints = append(p.Hints, format) }

// project is what an ecosystem's detection found: the guard and witness
// that run its tests by name, what to protect, and the programs whose
// files the sandbox must show.
type project struct {
	name      string   // the ecosystem
	signal    string   // why it is this ecosystem ("pyproject.toml")
	guard     []string // nil: no test runner found
	guardWhy  string
	witness   []string // nil: the guard's command
	witWhy    string
	protected []string
	protWhy   string
	programs  []string // executables the guard starts (looked up on PATH or relative)
	readable  []string // more "~/…" paths to show (a virtual environment outside the repository)
	hints     []string
}

// detectors are the ecosystems in the order a repository that has more
// than one is taken: the one whose manifest most often is the project's
// own (a package.json beside go.mod is usually tooling).
var detectors = []func(Env) *project{goProject, rustProject, pythonProject, jsProject}

// Detect looks at the repository and its environment and chooses.
func Detect(e Env, o Options) Plan {
	var p Plan
	var found []*project
	for _, d := range detectors {
		if pr := d(e); pr != nil {
			found = append(found, pr)
		}
	}
	var eco *project
	for _, pr := range found {
		if eco == nil && pr.guard != nil {
			eco = pr
		}
	}
	if eco == nil && len(found) > 0 {
		eco = found[0]
	}
	if eco != nil {
		p.Ecosystem = eco.name
		p.choose("ecosystem", eco.name, eco.signal)
		for _, pr := range found {
			if pr != eco && pr.guard != nil {
				p.hint(pr.name + " (" + pr.signal + ") is here too: its tests are not in the guard; add them to [guard] command (a script that runs both, writing into $RUNNER_TEST_RESULTS) if the nodes touch it")
			}
		}
	}
	programs := p.chooseGuard(e, o, eco)
	if eco != nil && len(eco.protected) > 0 {
		p.Protected = append(p.Protected, eco.protected...)
		p.choose("protected_paths", strings.Join(eco.protected, ", "), eco.protWhy)
	}
	if eco != nil {
		p.Hints = append(p.Hints, eco.hints...)
	}
	p.chooseReadable(e, o, eco, programs)
	return p
}

// chooseGuard chooses the guard, the results and the witness: --guard,
// else a justfile's ci recipe, else the ecosystem's test runner, else a
// Makefile's ci, check or test target, else the default. It returns the
// programs the guard starts.
func (p *Plan) chooseGuard(e Env, o Options, eco *project) []string {
	var programs []string
	if eco != nil {
		programs = eco.programs
	}
	just, justWhy := justCI(e.Root)
	switch {
	case o.Guard != nil:
		p.Guard = o.Guard
		p.choose("guard", Quote(o.Guard), "--guard")
		programs = append([]string{o.Guard[0]}, programs...)
		p.chooseResults(eco, Quote(o.Guard), "the command")
	case just != "":
		p.Guard = []string{"just", "ci"}
		p.choose("guard", "just ci", justWhy)
		programs = append([]string{"just"}, programs...)
		p.chooseResults(eco, just, "the ci recipe")
	case eco != nil && eco.guard != nil:
		p.Guard, p.Results = eco.guard, config.ResultsAuto
		p.choose("guard", Quote(eco.guard), eco.guardWhy)
		p.choose("results", config.ResultsAuto, "the guard reports its tests by name: a node passes only when the tests that passed before pass again and, for an execute leaf, a test it added fails without its work")
	default:
		if target, text, name := makeTarget(e.Root); target != "" && eco == nil {
			p.Guard = []string{"make", target}
			p.Protected = append(p.Protected, name)
			p.choose("guard", "make "+target, name+" has a "+target+" target")
			programs = append([]string{"make"}, programs...)
			p.chooseResults(nil, text, "the "+target+" target")
			return programs
		}
		p.Results = config.ResultsOff
		why := "the default: no justfile with a ci recipe, Makefile target or test runner found here"
		if eco != nil {
			why = "the default: no test runner of " + eco.name + " found here"
		}
		p.choose("guard", "just ci", why)
		p.hint("set [guard] command in " + layout.Config + " to the command that runs your tests (or give runner-init --guard), and [guard] results = \"auto\" once it reports them by name")
		return append([]string{"just"}, programs...)
	}
	if p.Results == config.ResultsAuto && eco != nil && eco.witness != nil {
		p.Witness = eco.witness
		p.choose("witness", Quote(eco.witness), eco.witWhy)
	} else if p.Results == config.ResultsAuto && eco != nil {
		p.choose("witness", "the guard's command", eco.witWhy)
	}
	return programs
}

// chooseResults sets results for a guard the user wrote (text is its
// command, or the recipe it runs): auto when it is seen to report tests
// by name, else off, saying what to do.
func (p *Plan) chooseResults(eco *project, text, what string) {
	if reportsByName(text) {
		p.Results = config.ResultsAuto
		p.choose("results", config.ResultsAuto, what+" reports tests by name")
		return
	}
	p.Results = config.ResultsOff
	how := "have it write JUnit XML into $RUNNER_TEST_RESULTS or print go test -json or cargo test's lines"
	if eco != nil && eco.guard != nil {
		how = "have it run " + Quote(eco.guard)
	}
	p.choose("results", config.ResultsOff, what+" is not seen to report tests by name, so a node passes on its exit status alone (no witness, no tests by name): "+how+", then set [guard] results = \"auto\"")
}

// chooseReadable resolves the guard's programs and the agent CLIs and
// chooses the places under the home directory the sandbox must show.
func (p *Plan) chooseReadable(e Env, o Options, eco *project, programs []string) {
	r := newResolver(e)
	var why []string
	for _, prog := range programs {
		if s := r.need(prog); s != "" {
			why = append(why, s)
		}
	}
	for _, a := range o.Agents {
		if s := r.need(a); s != "" {
			why = append(why, s)
		}
	}
	if eco != nil {
		for _, rd := range eco.readable {
			r.add(rd)
		}
	}
	p.Readable = r.roots()
	if len(p.Readable) > 0 {
		p.choose("readable", strings.Join(p.Readable, ", "), strings.Join(why, "; "))
	}
}

// exists reports whether root/rel exists.
func exists(root, rel string) bool {
	_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

// isFile reports whether root/rel is a regular file (through links).
func isFile(root, rel string) bool {
	st, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil && st.Mode().IsRegular()
}

// read is root/rel's bytes, nil when it cannot be read (at most 1 MiB).
func read(root, rel string) []byte {
	f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	n, _ := f.Read(buf)
	for n < len(buf) {
		m, err := f.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			break
		}
	}
	return buf[:n]
}

// firstOf is the first of names that exists under root, "" when none.
func firstOf(root string, names ...string) string {
	for _, n := range names {
		if exists(root, n) {
			return n
		}
	}
	return ""
}

// Quote is argv as one line a person reads (and a POSIX shell splits
// back): a word of plain characters as it is, any other in single quotes.
func Quote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_./:=${}@%+,-", r))
		}) < 0 {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// sortedUnique is ss sorted without repeats.
func sortedUnique(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}
