// Package agent runs one fresh agent session for an iteration (seed 000 §8:
// "replaceable backends behind a stable interface"). A Backend turns a
// Request (the prompt pack, the node, the mode, the deadline, the [agent]
// config) into one process run and a Result: the raw output JSON taken from
// the backend's structured channel (never searched for in free text), a
// failure class, usage and provenance. Judging the output (schema, status
// for the mode), protected paths and git state is agent-exec's job, the same
// for every backend.
package agent

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/vocab"
)

// Failure classes recorded in agent.json and meta.json.
const (
	ClassOK            = string(vocab.ClassOK)
	ClassTimeout       = string(vocab.ClassTimeout)       // the iteration deadline ended the session
	ClassHang          = string(vocab.ClassHang)          // no output for agent_idle_timeout_secs
	ClassInterrupted   = string(vocab.ClassInterrupted)   // SIGINT, SIGTERM or .runner/cancel
	ClassStartError    = string(vocab.ClassStartError)    // the executable could not be started
	ClassConfig        = string(vocab.ClassConfig)        // the CLI refused its settings, input or workspace
	ClassNoOutput      = string(vocab.ClassNoOutput)      // no structured output
	ClassInvalidOutput = string(vocab.ClassInvalidOutput) // output not valid for the schema or the mode
	ClassAuth          = string(vocab.ClassAuth)          // authentication failed
	ClassRateLimit     = string(vocab.ClassRateLimit)     // usage or rate limit
	ClassAPIError      = string(vocab.ClassAPIError)      // the API refused the request
	ClassOutage        = string(vocab.ClassOutage)        // the provider unreachable or failing on its side (outage.go)
	ClassTurnLimit     = string(vocab.ClassTurnLimit)     // the CLI's turn limit ended the session
	ClassPermission    = string(vocab.ClassPermission)    // the CLI refused a needed permission
	ClassPolicy        = string(vocab.ClassPolicy)        // the session broke a rule: protected path, moved HEAD
)

// RunnerClasses are the classes that are no fault of the agent's: no
// attempt is consumed (DESIGN.md decisions 5 and 26). A rate limit and an
// outage pause the run (PauseClasses); the others are runner errors, and
// the loop stops.
var RunnerClasses = []string{ClassStartError, ClassConfig, ClassAuth, ClassRateLimit, ClassAPIError, ClassOutage}

// PauseClasses are the classes that pause the run once no fallback is
// left: a usage or rate limit, and an outage.
var PauseClasses = []string{ClassRateLimit, ClassOutage}

// IsRunnerClass reports whether class is no fault of the agent's.
func IsRunnerClass(class string) bool { return slices.Contains(RunnerClasses, class) }

// Pauses reports whether class pauses the run (PauseClasses).
func Pauses(class string) bool { return slices.Contains(PauseClasses, class) }

// Reported reports whether a session of backend that ended in class
// failed on its own word, a report the runner cannot check: every failure
// report of a command agent (and of a replayed one), and a CLI's rate
// limit or API error, which the CLI claims in its messages. A CLI's
// outage is the CLI's own connection failing (or the provider's 5xx),
// which the runner reads from the CLI's errors and retries, and is not
// counted; max_pause bounds it. [agent] max_reported_failures bounds the
// reported failures in a row on one node that cost no attempt.
func Reported(backend, class string) bool {
	if spec, ok := Lookup(backend); ok && !spec.CLI() {
		return slices.Contains(FailureClasses, class)
	}
	return class == ClassRateLimit || class == ClassAPIError
}

// FailureClasses are the classes a command agent's failure report may
// give (schemas/agent_failure.v1).
var FailureClasses = []string{ClassRateLimit, ClassAuth, ClassAPIError, ClassOutage}

// Request is one agent session.
type Request struct {
	Prompt      []byte        // the prompt pack, fed on stdin
	PromptPath  string        // absolute path of prompt.md
	Root        string        // absolute repository root: the working directory
	IterDir     string        // absolute iteration directory
	OutputPath  string        // absolute path where the output JSON belongs (<iter>/output.json)
	RunID       string        // the run
	Iteration   int           // the iteration number
	NodeID      string        // the selected leaf
	NodePath    string        // its path, ids joined by "/"
	Mode        string        // execute | decompose
	Deadline    time.Time     // absolute end of the iteration's budget
	IdleTimeout time.Duration // stop after this long without output; 0 = off
	Config      config.Agent  // [agent] after environment overrides
	Log         io.Writer     // executor.log (capped): everything the process prints
	Events      io.Writer     // events.jsonl (capped): the CLI's JSON event stream, if any
	Tee         io.Writer     // live view (a terminal), may be nil
	// ExtraEnv is added to the CLI's environment (KEY=VALUE): the node's
	// own settings (lib/nodetools).
	ExtraEnv []string
	// Sandbox, when set, turns the argv to run with the environment env
	// into the confined one (lib/sandbox, [sandbox] mode = "bwrap" or
	// "docker"); nil runs it as it is.
	Sandbox func(argv, env []string) ([]string, error)
	// InContainer says the session runs in a container (Sandbox under
	// [sandbox] mode = "docker"): its processes are the engine's, not
	// descendants of this process (or, with podman, only through the
	// engine's monitor), so none is killed as escaped; removing the
	// container ends them.
	InContainer bool
	// Restartable, when set, readies the spec of the command Sandbox made
	// to be started again when its sandbox never ran the CLI
	// (sandbox.Restartable): not an agent error.
	Restartable func(*proc.Spec)
}

// command is the argv to start for argv with the environment env: wrapped
// in the sandbox when the request has one.
func (r Request) command(argv, env []string) ([]string, error) {
	if r.Sandbox == nil {
		return argv, nil
	}
	return r.Sandbox(argv, env)
}

// restartable readies spec as r.Restartable does, when it is set.
func (r Request) restartable(spec *proc.Spec) {
	if r.Restartable != nil {
		r.Restartable(spec)
	}
}

// Result is how a session ended.
type Result struct {
	Argv       []string      // what ran
	Proc       proc.Result   // the process's end
	Output     []byte        // the structured output; nil when there is none
	Class      string        // one of the Class constants; "" means judge Output
	Message    string        // one line for the class
	ResetAt    string        // rate limit reset time, RFC 3339, when given
	Usage      iterdir.Usage // tokens and cost, when reported
	CLIVersion string        // the CLI's version, when known
	Model      string        // the model, when known
	// AutoCompaction is whether the CLI could summarize the session's
	// context by itself: CompactionOff where the CLI allows turning it off
	// (seed 000 §6.2, §8), CompactionOn where it does not; "" for command
	// and replay.
	AutoCompaction string
}

// The values of Result.AutoCompaction.
const (
	CompactionOff = "off"
	CompactionOn  = "on"
)

// Backend runs sessions. Run returns an error only when the session could
// not be run at all (a *proc.StartError, a bad configuration): a runner
// error.
type Backend interface {
	Name() string
	Run(ctx context.Context, req Request) (Result, error)
}

// New returns the backend named name (config.Backends, Specs).
func New(name string) (Backend, error) {
	if spec, ok := Lookup(name); ok {
		return spec.New(), nil
	}
	if slices.Contains(config.Backends, name) {
		return nil, fmt.Errorf("agent backend %q is not available in this build (available: %s)", name, strings.Join(Names(false), ", "))
	}
	return nil, fmt.Errorf("unknown agent backend %q (want one of %s)", name, strings.Join(config.Backends, ", "))
}

// Env is the RUNNER_* environment every backend gives the agent, appended
// to base without the step's own variables (git.StepVars: DESIGN.md
// decision 20, the agent's environment never carries them).
func Env(base []string, req Request) []string {
	return append(append(git.Strip(base),
		"RUNNER_ROOT="+req.Root,
		"RUNNER_RUN_ID="+req.RunID,
		fmt.Sprintf("RUNNER_ITERATION=%d", req.Iteration),
		"RUNNER_ITER_DIR="+req.IterDir,
		"RUNNER_PROMPT="+req.PromptPath,
		"RUNNER_OUTPUT="+req.OutputPath,
		"RUNNER_NODE_ID="+req.NodeID,
		"RUNNER_NODE_PATH="+req.NodePath,
		"RUNNER_MODE="+req.Mode,
		"RUNNER_DEADLINE="+req.Deadline.UTC().Format(time.RFC3339),
		config.EnvAgentPermissionMode+"="+req.Config.PermissionMode,
	), req.ExtraEnv...)
}

// Executable is the program backend runs for cfg: [agent] bin, else the
// CLI's own name (Spec.Bin); "" for the command backend without a bin and
// for replay, which runs nothing.
func Executable(cfg config.Agent) string {
	spec, ok := Lookup(cfg.Backend)
	switch {
	case !ok:
		return binOr(Request{Config: cfg}, cfg.Backend)
	case spec.RunsNothing:
		return ""
	}
	return binOr(Request{Config: cfg}, spec.Bin)
}

// Measures says what the sessions of backend report: tokens, and a cost
// in US dollars (Spec.Tokens, Spec.Cost).
func Measures(backend string) (tokens, cost bool) {
	spec, _ := Lookup(backend)
	return spec.Tokens, spec.Cost
}

// SandboxFiles are the files of the iteration directory iterDir a session
// under cfg writes besides the repository (outPath, its output; the
// Spec.IterFiles of its backend and fallbacks, as Codex's last message):
// the sandbox binds them writable, so they must exist when it starts.
func SandboxFiles(cfg config.Agent, iterDir, outPath string) []string {
	files := []string{outPath}
	for _, name := range append([]string{cfg.Backend}, cfg.Fallback...) {
		spec, _ := Lookup(name)
		for _, f := range spec.IterFiles {
			if p := filepath.Join(iterDir, f); !slices.Contains(files, p) {
				files = append(files, p)
			}
		}
	}
	return files
}

// SandboxHome is where backend's CLI keeps its login, settings and
// sessions under the home directory ("~/" paths, Spec.Home): under the
// bwrap sandbox the home is hidden, and these are bound writable
// ([sandbox] writable, which runner-init fills in).
func SandboxHome(backend string) []string {
	spec, _ := Lookup(backend)
	return spec.Home
}
