// Package config loads the runner configuration, .runner/state/config.toml
// (seed 000 §3, DESIGN.md decisions 6 and 13): strict TOML decoding, defaults
// for absent keys, validation that names every bad key, and the RUNNER_*
// environment overrides.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/treeloop/treeloop/lib/keyval"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/pathglob"
	"github.com/treeloop/treeloop/lib/tomlkey"
)

// Config is the runner configuration. The toml tags are the file's keys.
type Config struct {
	MaxAttemptsDefault int `toml:"max_attempts_default"` // attempts budget given to new nodes, >= 1
	// StuckPolicy is what the loop does with a leaf that has used all its
	// attempts (DESIGN.md decision 7): one of StuckPolicies.
	StuckPolicy              string `toml:"stuck_policy"`
	MaxIterations            int    `toml:"max_iterations"`              // iterations per run before the loop stops with the limit code, >= 1
	IterationTimeoutSecs     int    `toml:"iteration_timeout_secs"`      // one wall-clock budget per iteration, agent + guard, >= 1
	AgentIdleTimeoutSecs     int    `toml:"agent_idle_timeout_secs"`     // stop an agent that prints nothing this long; 0 = off
	ExecutorOutputLimitBytes int    `toml:"executor_output_limit_bytes"` // cap on the agent's captured output, > 0
	GuardOutputLimitBytes    int    `toml:"guard_output_limit_bytes"`    // cap on the guard's captured output, > 0
	PromptBudgetBytes        int    `toml:"prompt_budget_bytes"`         // prompt pack budget, >= MinPromptBudgetBytes
	// ArtifactsLimitBytes caps what a node's artifacts directory holds
	// (.runner/nodes/<id>/artifacts/, seed 000 §3.4), its regular files'
	// bytes together; 0 allows none.
	ArtifactsLimitBytes int `toml:"artifacts_limit_bytes"`
	// ProtectedPaths are what the agent must not change: globs (path.Match
	// element by element, "**" for any number of elements: lib/pathglob),
	// one marked append-only by AppendOnlyPrefix, or a key of a file
	// (ProtectedKey).
	ProtectedPaths []string `toml:"protected_paths"`
	Guard          Guard    `toml:"guard"`
	Agent          Agent    `toml:"agent"`
	Hooks          Hooks    `toml:"hooks"` // notifications
	Sandbox        Sandbox  `toml:"sandbox"`
	Setup          Setup    `toml:"setup"`
}

// Hooks is the [hooks] table ("notifications"): commands (argv,
// not run through a shell) run with the run record as JSON on stdin and
// RUNNER_* variables in their environment. An empty argv runs nothing. A
// hook that fails or outlives TimeoutSecs is logged in the run record and
// never stops or fails the loop.
type Hooks struct {
	OnIteration []string `toml:"on_iteration"` // after every committed iteration
	OnComplete  []string `toml:"on_complete"`  // the tree is complete
	OnStuck     []string `toml:"on_stuck"`     // a leaf has no attempts left
	OnLimit     []string `toml:"on_limit"`     // max_iterations or a run budget reached
	OnError     []string `toml:"on_error"`     // the run ended on an error or a timeout
	OnQuestion  []string `toml:"on_question"`  // an agent asked the operator: a leaf waits for an answer
	OnPause     []string `toml:"on_pause"`     // a usage limit or an outage paused the run
	TimeoutSecs int      `toml:"timeout_secs"` // each hook's own wall-clock budget, >= 1
}

// Hook is one configured hook: its key in [hooks] and its argv.
type Hook struct {
	Name string // on_iteration, on_complete, on_stuck, on_limit, on_error, on_question, on_pause
	Argv []string
}

// Named lists the hooks in file order.
func (h Hooks) Named() []Hook {
	return []Hook{{"on_iteration", h.OnIteration}, {"on_complete", h.OnComplete}, {"on_stuck", h.OnStuck}, {"on_limit", h.OnLimit}, {"on_error", h.OnError}, {"on_question", h.OnQuestion}, {"on_pause", h.OnPause}}
}

// Timeout is timeout_secs as a duration.
func (h Hooks) Timeout() time.Duration { return time.Duration(h.TimeoutSecs) * time.Second }

// Setup is the [setup] table (seed 004 "Setup"): commands run
// once before a run's first iteration, and again in each new worktree.
type Setup struct {
	Commands [][]string `toml:"commands"` // argvs, run in order; none = no setup
}

// Sandbox is the [sandbox] table ("OS sandbox"; DESIGN.md
// decision 19): how the agent, and by choice the guard, are confined.
type Sandbox struct {
	Mode     string   `toml:"mode"`     // SandboxNone, SandboxBwrap or SandboxDocker
	Engine   string   `toml:"engine"`   // mode "docker": EngineDocker or EnginePodman
	Image    string   `toml:"image"`    // mode "docker": the image sessions run in; DefaultImage runs the host's /usr and /etc
	Guard    bool     `toml:"guard"`    // run the guard in the sandbox too (the default; false only when written so)
	Network  string   `toml:"network"`  // NetworkHost or NetworkNone
	Writable []string `toml:"writable"` // absolute or ~/ paths the sandboxed command may write (the CLI's home, a cache)
	Readable []string `toml:"readable"` // absolute or ~/ paths it may read: under the hidden home, or (mode "docker") anywhere
}

// The accepted values of sandbox.mode, sandbox.engine and sandbox.network.
const (
	SandboxNone   = "none"
	SandboxBwrap  = "bwrap"
	SandboxDocker = "docker"
	EngineDocker  = "docker"
	EnginePodman  = "podman"
	NetworkHost   = "host"
	NetworkNone   = "none"
)

// DefaultImage is sandbox.image's default: an empty skeleton built
// locally (runner-check --build-image) in which a session runs the host's
// own /usr and /etc, read-only.
const DefaultImage = "treeloop-host"

// Confined reports whether a sandbox confines the agent (mode "bwrap" or
// "docker").
func (s Sandbox) Confined() bool { return s.Mode == SandboxBwrap || s.Mode == SandboxDocker }

// ConfinesGuard reports whether the guard runs in the sandbox too.
func (s Sandbox) ConfinesGuard() bool { return s.Confined() && s.Guard }

// Guard is the [guard] table.
type Guard struct {
	Command []string `toml:"command"` // argv, non-empty
	// Ratchet is the test ratchet: an argv that prints how many
	// tests passed (its last non-empty stdout line, an integer), run after
	// every green guard; a count below the best of the run fails the
	// guard. Empty = off.
	Ratchet []string `toml:"ratchet"`
	// Results says where the guard reports its tests by name (DESIGN.md
	// decision 24): ResultsAuto reads the files it writes into the
	// directory $RUNNER_TEST_RESULTS names and its own output (lib/testresults);
	// ResultsOff judges by its exit status alone (no tests by name, no
	// PASS_TO_PASS, no witness).
	Results string `toml:"results"`
	// Witness is the argv that runs the given test files alone, reporting
	// them by name: an element "${RUNNER_TEST_FILES}" stands for the
	// test files the node added or changed, "${RUNNER_TEST_DIRS}" for
	// their directories ("./dir"). Empty = the guard's command.
	Witness []string `toml:"witness"`
	// TestFiles are the globs (doublestar syntax: "**" crosses
	// directories) of the test files a witness is sought among.
	TestFiles []string `toml:"test_files"`
	// Evidence is the evidence an execute leaf needs to pass when its node
	// does not say: EvidenceWitness or EvidenceSuite.
	Evidence string `toml:"evidence"`
	// SuiteNodes are node id globs (path.Match) whose default evidence is
	// EvidenceSuite: the operator's defaults by path for work no test can
	// witness.
	SuiteNodes []string `toml:"suite_nodes"`
	// Caches: CachesPrivate gives the guard build caches of its own, out of
	// every session's reach (Go's build cache, Python's bytecode, cargo's
	// target directory, a fresh TMPDIR); CachesShared lets it use the
	// user's, as a session left them.
	Caches string `toml:"caches"`
}

// The accepted values of guard.results, guard.evidence and guard.caches.
const (
	ResultsAuto     = "auto"
	ResultsOff      = "off"
	EvidenceWitness = "witness"
	EvidenceSuite   = "suite"
	CachesPrivate   = "private"
	CachesShared    = "shared"
)

// DefaultTestFiles are guard.test_files' default: the test files of the
// common ecosystems (Go, Python, JavaScript and TypeScript, Rust, Ruby,
// Java).
var DefaultTestFiles = []string{
	"**/*_test.go",
	"**/test_*.py", "**/*_test.py", "**/tests/**/*.py",
	"**/*.test.*", "**/*.spec.*", "**/__tests__/**",
	"**/tests/**/*.rs",
	"**/spec/**/*_spec.rb", "**/test/**/*_test.rb",
	"**/src/test/**",
	// mocha's: every script under test/ (its default spec is
	// ./test/*.{js,cjs,mjs}), helpers included, which mocha loads as specs:
	// the witness's scratch checkout must hold them too.
	"**/test/**/*.{js,cjs,mjs,ts}",
}

// EvidenceOn reports whether the guard reports its tests by name.
func (g Guard) EvidenceOn() bool { return g.Results == ResultsAuto }

// AppendOnlyPrefix marks a protected_paths entry append-only: new files
// under the glob are allowed, files that existed at the iteration's start
// may not be changed or deleted ("append-only:tests").
const AppendOnlyPrefix = "append-only:"

// Protected is protected_paths with what the runner protects beside its
// own files: every node's tools.json (the operator's agent settings, seed
// 000 §3.4). The checks after a session read these.
func (c Config) Protected() []string {
	return append(slices.Clone(c.ProtectedPaths), layout.NodeToolsGlob)
}

// ProtectedKey splits a protected_paths entry "FILE#KEY" (FILE a glob of
// a .toml, .json, .ini or .cfg file) into FILE and KEY: the value at KEY
// in the files FILE matches is protected, the rest of them is not
// (lib/keyval). ok is false for an entry that protects whole paths.
func ProtectedKey(entry string) (file, key string, ok bool) {
	if strings.HasPrefix(entry, AppendOnlyPrefix) {
		return "", "", false
	}
	return keyval.Split(entry)
}

// ProtectedGlob splits a protected_paths entry into its glob and whether
// it is append-only.
func ProtectedGlob(entry string) (glob string, appendOnly bool) {
	if g, ok := strings.CutPrefix(entry, AppendOnlyPrefix); ok {
		return g, true
	}
	return entry, false
}

// Agent is the [agent] table.
type Agent struct {
	Backend     string   `toml:"backend"`       // one of Backends
	Bin         string   `toml:"bin"`           // executable; "" = the backend's default binary name
	Model       string   `toml:"model"`         // model passed to the backend; "" = its default
	ExtraArgs   []string `toml:"extra_args"`    // extra argv appended to the backend's invocation
	OnRateLimit string   `toml:"on_rate_limit"` // RateLimitStop or RateLimitWait
	MaxTokens   int      `toml:"max_tokens"`    // run budget in tokens, 0 = unlimited
	MaxCostUSD  float64  `toml:"max_cost_usd"`  // run budget in US dollars, 0 = unlimited
	Cassette    string   `toml:"cassette"`      // record sessions here (any backend) or replay them (backend replay); "" = off
	// PermissionMode is what an agent CLI may do without asking (seed 004
	// permissionMode): one of PermissionModes, mapped per backend
	// (lib/agent). The default, PermissionFull, lets it do anything: the
	// guard, the runner's checks and the sandbox are the boundary.
	PermissionMode string `toml:"permission_mode"`
	// Fallback are the backends that take over, in order, when a session
	// ends in a rate limit, an outage or refused authentication; each runs
	// with its default executable and model. One of FallbackBackends.
	Fallback []string `toml:"fallback"`
	// Prices by model name ([agent] prices = {"<model>" = {…}}): the cost of a
	// session whose CLI reports none is computed from its tokens.
	Prices map[string]Price `toml:"prices"`
	// The models by mode and attempt (ModelFor): decomposition sessions,
	// execution sessions, and the last attempt of a leaf (escalation);
	// "" = Model.
	DecomposeModel   string `toml:"decompose_model"`
	ExecuteModel     string `toml:"execute_model"`
	LastAttemptModel string `toml:"last_attempt_model"`
	// MaxPause bounds the total time one runner-loop pauses the run on
	// usage limits and outages, and a reported reset; 0 = never pause
	// (the loop stops, as --no-pause).
	MaxPause Duration `toml:"max_pause"`
	// MaxReportedFailures is how many failures a session reports about
	// itself (agent.Reported: rate_limit, api_error, a command agent's
	// failure report) may come in a row on one node and cost no attempt;
	// each further one in the row costs one. 0: every one does.
	MaxReportedFailures int `toml:"max_reported_failures"`
}

// Duration is a length of time in the file: an integer number of seconds
// or a Go duration string ("12h", "90m"). A struct, so that go-toml hands
// an integer to UnmarshalText too.
type Duration struct{ time.Duration }

// durationError is a value UnmarshalText refused; decodeError names the
// key (agent.max_pause, the one key of this type) and its line.
type durationError struct{ text string }

func (e *durationError) Error() string {
	return fmt.Sprintf("%q is neither a number of seconds (0 or more) nor a duration such as \"12h\" or \"90m\"", e.text)
}

// UnmarshalText reads seconds or a duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	s := string(b)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n > int64(maxSecs) {
			return &durationError{s}
		}
		d.Duration = time.Duration(n) * time.Second
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return &durationError{s}
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as Go does ("12h0m0s").
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Model rules: which [agent] key chose a session's model (ModelFor).
const (
	ModelRuleModel       = "model"
	ModelRuleDecompose   = "decompose_model"
	ModelRuleExecute     = "execute_model"
	ModelRuleLastAttempt = "last_attempt_model"
)

// ModelFor is the model of a session on a leaf in mode (execute or
// decompose) that has used attempts of maxAttempts, and the key that chose
// it: last_attempt_model on the leaf's last attempt (attempts ==
// maxAttempts-1), else decompose_model or execute_model for the mode, else
// model; a key left empty falls through to the next. "" is the backend's
// default model.
func (a Agent) ModelFor(mode string, attempts, maxAttempts int) (model, rule string) {
	if a.LastAttemptModel != "" && maxAttempts > 0 && attempts == maxAttempts-1 {
		return a.LastAttemptModel, ModelRuleLastAttempt
	}
	if mode == "decompose" && a.DecomposeModel != "" {
		return a.DecomposeModel, ModelRuleDecompose
	}
	if mode == "execute" && a.ExecuteModel != "" {
		return a.ExecuteModel, ModelRuleExecute
	}
	return a.Model, ModelRuleModel
}

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input       float64 `toml:"input"`        // input tokens not read from the cache
	CachedInput float64 `toml:"cached_input"` // input tokens read from the cache
	Output      float64 `toml:"output"`       // output tokens
}

// Cost is the price of a session in US dollars: input counts every input
// token, cached included (as every backend reports it), cached those read
// from the cache.
func (p Price) Cost(input, cached, output int64) float64 {
	fresh := max(input-cached, 0)
	return (float64(fresh)*p.Input + float64(cached)*p.CachedInput + float64(output)*p.Output) / 1e6
}

// Price is the price of model from [agent.prices], if it has one.
func (a Agent) Price(model string) (Price, bool) {
	p, ok := a.Prices[model]
	return p, ok && model != ""
}

// FallbackBackends are the backends agent.fallback accepts: the agent CLIs,
// which need no [agent] bin.
var FallbackBackends = []string{"codex", "claude", "opencode", "gemini"}

// The accepted values of agent.permission_mode.
const (
	// PermissionFull: every tool approved, no sandbox of the CLI's own.
	PermissionFull = "full"
	// PermissionEdits: file edits approved, shell commands refused (codex,
	// which cannot refuse them, runs them in its workspace-write sandbox).
	PermissionEdits = "edits"
	// PermissionReadOnly: nothing written; the CLI's plan or read-only mode.
	PermissionReadOnly = "read-only"
)

// PermissionModes are the accepted values of agent.permission_mode (and
// RUNNER_AGENT_PERMISSION_MODE).
var PermissionModes = []string{PermissionFull, PermissionEdits, PermissionReadOnly}

// Backends are the accepted values of agent.backend (and RUNNER_AGENT).
var Backends = []string{"command", "codex", "claude", "opencode", "gemini", "replay"}

// The accepted values of agent.on_rate_limit.
const (
	RateLimitStop = "stop"
	RateLimitWait = "wait"
)

// The accepted values of stuck_policy (lib/tree's StuckPolicy, which
// decides with them).
const (
	// StuckStop: the run ends stuck at the first leaf with no attempts
	// left that selection reaches. The default.
	StuckStop = "stop"
	// StuckSkip: selection passes over leaves with no attempts left; the
	// run ends stuck once no other leaf is left to work.
	StuckSkip = "skip"
	// StuckDecompose: a leaf that uses up its attempts goes back to the
	// agent once in decompose mode; sent back before, it stops the run.
	StuckDecompose = "decompose"
)

// StuckPolicies are the accepted values of stuck_policy, the default first.
var StuckPolicies = []string{StuckStop, StuckSkip, StuckDecompose}

// DefaultMaxReportedFailures is max_reported_failures' default.
const DefaultMaxReportedFailures = 3

// DefaultMaxPause is max_pause's default: a night.
var DefaultMaxPause = Duration{12 * time.Hour}

// MinPromptBudgetBytes is the smallest accepted prompt_budget_bytes.
const MinPromptBudgetBytes = 4096

// Upper bounds that keep counts in 32 bits.
const (
	maxAttempts   = math.MaxInt32
	maxIterations = math.MaxInt32
)

// maxSecs keeps second counts convertible to a time.Duration.
const maxSecs = math.MaxInt64 / int(time.Second)

// Default returns the configuration used for every key the file leaves out.
// Each call returns fresh slices.
func Default() Config {
	return Config{
		MaxAttemptsDefault:       3,
		StuckPolicy:              StuckStop,
		MaxIterations:            100,
		IterationTimeoutSecs:     1800,
		AgentIdleTimeoutSecs:     600,
		ExecutorOutputLimitBytes: 100000,
		GuardOutputLimitBytes:    100000,
		PromptBudgetBytes:        40000,
		ArtifactsLimitBytes:      1 << 20,
		ProtectedPaths:           []string{"justfile", "Justfile", ".justfile"},
		Guard: Guard{Command: []string{"just", "ci"}, Ratchet: []string{}, Results: ResultsOff, Witness: []string{},
			TestFiles: slices.Clone(DefaultTestFiles), Evidence: EvidenceWitness, SuiteNodes: []string{}, Caches: CachesPrivate},
		Agent: Agent{
			Backend:        "command",
			ExtraArgs:      []string{},
			OnRateLimit:    RateLimitStop,
			PermissionMode: PermissionFull,
			Prices:         map[string]Price{},
			Fallback:       []string{},
			MaxPause:       DefaultMaxPause,
			// Three in a row: a limit, its reset, and a retry or two; a
			// fourth on the same node is no longer believed for free.
			MaxReportedFailures: DefaultMaxReportedFailures,
		},
		Hooks:   Hooks{OnIteration: []string{}, OnComplete: []string{}, OnStuck: []string{}, OnLimit: []string{}, OnError: []string{}, OnQuestion: []string{}, OnPause: []string{}, TimeoutSecs: 30},
		Sandbox: Sandbox{Mode: SandboxNone, Engine: EngineDocker, Image: DefaultImage, Guard: true, Network: NetworkHost, Writable: []string{}, Readable: []string{}},
		Setup:   Setup{Commands: [][]string{}},
	}
}

// IterationTimeout is iteration_timeout_secs as a duration.
func (c Config) IterationTimeout() time.Duration {
	return time.Duration(c.IterationTimeoutSecs) * time.Second
}

// AgentIdleTimeout is agent_idle_timeout_secs as a duration; 0 means off.
func (c Config) AgentIdleTimeout() time.Duration {
	return time.Duration(c.AgentIdleTimeoutSecs) * time.Second
}

// Error is one configuration problem. Its message names the key (or the
// environment variable) it is about.
type Error struct {
	File string // the name given to Parse or Load; "" for Validate and ApplyEnv
	Line int    // 1-based line of the key in File; 0 when not known
	Key  string // dotted TOML key ("agent.backend") or environment variable
	Msg  string // the message, naming Key
}

func (e *Error) Error() string {
	switch {
	case e.File != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.File != "":
		return e.File + ": " + e.Msg
	default:
		return e.Msg
	}
}

// Errors is a list of problems, reported on one line separated by "; ".
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap gives errors.As access to each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Validate checks every value and returns nil or an Errors listing all
// problems, each naming its key.
func (c Config) Validate() error {
	var es Errors
	bad := func(key, format string, args ...any) {
		es = append(es, &Error{Key: key, Msg: key + ": " + fmt.Sprintf(format, args...)})
	}
	inRange(bad, "max_attempts_default", c.MaxAttemptsDefault, 1, maxAttempts)
	if !slices.Contains(StuckPolicies, c.StuckPolicy) {
		bad("stuck_policy", "must be one of %s, got %q", strings.Join(StuckPolicies, ", "), c.StuckPolicy)
	}
	inRange(bad, "max_iterations", c.MaxIterations, 1, maxIterations)
	inRange(bad, "iteration_timeout_secs", c.IterationTimeoutSecs, 1, maxSecs)
	inRange(bad, "agent_idle_timeout_secs", c.AgentIdleTimeoutSecs, 0, maxSecs)
	inRange(bad, "executor_output_limit_bytes", c.ExecutorOutputLimitBytes, 1, math.MaxInt)
	inRange(bad, "guard_output_limit_bytes", c.GuardOutputLimitBytes, 1, math.MaxInt)
	inRange(bad, "prompt_budget_bytes", c.PromptBudgetBytes, MinPromptBudgetBytes, math.MaxInt)
	inRange(bad, "artifacts_limit_bytes", c.ArtifactsLimitBytes, 0, math.MaxInt)
	validateProtected(c.ProtectedPaths, bad)
	c.Guard.validate(bad)
	c.Agent.validate(bad)
	c.Hooks.validate(bad)
	c.Setup.validate(bad)
	c.Sandbox.validate(bad)
	if len(es) == 0 {
		return nil
	}
	return es
}

// inRange reports an integer value outside [lo, hi] through bad.
func inRange(bad func(key, format string, args ...any), key string, v, lo, hi int) {
	switch {
	case v < lo:
		bad(key, "must be at least %d, got %d", lo, v)
	case v > hi:
		bad(key, "must be at most %d, got %d", hi, v)
	}
}

// validateProtected reports the protected_paths patterns that match
// nothing (empty, a NUL byte, bad syntax), and the key entries
// (ProtectedKey) whose key cannot be read or that are append-only,
// through bad.
func validateProtected(paths []string, bad func(key, format string, args ...any)) {
	for i, e := range paths {
		key := fmt.Sprintf("protected_paths[%d]", i)
		p, appendOnly := ProtectedGlob(e)
		file, k, isKey := keyval.Split(p)
		switch {
		case p == "" || file == "":
			bad(key, "empty pattern")
		case strings.ContainsRune(p, 0):
			bad(key, "pattern %q contains a NUL byte", p)
		case isKey && appendOnly:
			bad(key, "%q: a key entry (FILE#KEY) cannot be append-only", e)
		default:
			if err := pathglob.Validate(file); err != nil {
				bad(key, "bad pattern %q: %v", file, err)
			} else if _, err := keyval.ParseKey(keyval.Format(file), k); isKey && err != nil {
				bad(key, "%q: bad key: %v", p, err)
			}
		}
	}
}

// validate reports the [guard] table's bad keys through bad.
func (g Guard) validate(bad func(key, format string, args ...any)) {
	if len(g.Command) == 0 {
		bad("guard.command", "must not be empty")
	} else if g.Command[0] == "" {
		bad("guard.command", "program name (first element) must not be empty")
	}
	argv("guard.command", g.Command, bad)
	if len(g.Ratchet) > 0 && g.Ratchet[0] == "" {
		bad("guard.ratchet", "program name (first element) must not be empty")
	}
	argv("guard.ratchet", g.Ratchet, bad)
	oneOf(bad, "guard.results", g.Results, ResultsAuto, ResultsOff)
	oneOf(bad, "guard.evidence", g.Evidence, EvidenceWitness, EvidenceSuite)
	oneOf(bad, "guard.caches", g.Caches, CachesPrivate, CachesShared)
	if len(g.Witness) > 0 && g.Witness[0] == "" {
		bad("guard.witness", "program name (first element) must not be empty")
	}
	argv("guard.witness", g.Witness, bad)
	for i, p := range g.TestFiles {
		if p == "" || !doublestar.ValidatePattern(p) {
			bad(fmt.Sprintf("guard.test_files[%d]", i), "bad pattern %q", p)
		}
	}
	for i, p := range g.SuiteNodes {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			bad(fmt.Sprintf("guard.suite_nodes[%d]", i), "bad pattern %q", p)
		}
	}
}

// oneOf reports v through bad unless it is one of want.
func oneOf(bad func(key, format string, args ...any), key, v string, want ...string) {
	if !slices.Contains(want, v) {
		q := make([]string, len(want))
		for i, w := range want {
			q[i] = strconv.Quote(w)
		}
		bad(key, "must be %s, got %q", strings.Join(q, " or "), v)
	}
}

// validate reports the [agent] table's bad keys through bad.
func (a Agent) validate(bad func(key, format string, args ...any)) {
	if !slices.Contains(Backends, a.Backend) {
		bad("agent.backend", "must be one of %s, got %q", strings.Join(Backends, ", "), a.Backend)
	}
	if strings.ContainsRune(a.Bin, 0) {
		bad("agent.bin", "contains a NUL byte")
	}
	a.validateModels(bad)
	argv("agent.extra_args", a.ExtraArgs, bad)
	if a.OnRateLimit != RateLimitStop && a.OnRateLimit != RateLimitWait {
		bad("agent.on_rate_limit", "must be %q or %q, got %q", RateLimitStop, RateLimitWait, a.OnRateLimit)
	}
	if !slices.Contains(PermissionModes, a.PermissionMode) {
		bad("agent.permission_mode", "must be one of %s, got %q", strings.Join(PermissionModes, ", "), a.PermissionMode)
	}
	for i, b := range a.Fallback {
		if !slices.Contains(FallbackBackends, b) {
			bad("agent.fallback", "element %d must be one of %s, got %q", i, strings.Join(FallbackBackends, ", "), b)
		}
	}
	if a.MaxTokens < 0 {
		bad("agent.max_tokens", "must be 0 (unlimited) or more, got %d", a.MaxTokens)
	}
	inRange(bad, "agent.max_reported_failures", a.MaxReportedFailures, 0, math.MaxInt32)
	if f := a.MaxCostUSD; math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		bad("agent.max_cost_usd", "must be 0 (unlimited) or a positive number, got %v", f)
	}
	a.validatePrices(bad)
}

// validatePrices reports the [agent.prices] entries that are not
// non-negative numbers through bad.
func (a Agent) validatePrices(bad func(key, format string, args ...any)) {
	for _, model := range slices.Sorted(maps.Keys(a.Prices)) {
		p := a.Prices[model]
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"cached_input", p.CachedInput}, {"output", p.Output}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
				key := "agent.prices." + tomlkey.Join([]string{model}) + "." + f.name
				bad(key, "must be 0 or a positive number (US dollars per million tokens), got %v", f.v)
			}
		}
	}
}

// validate reports the [hooks] table's bad keys through bad.
func (h Hooks) validate(bad func(key, format string, args ...any)) {
	for _, n := range h.Named() {
		key := "hooks." + n.Name
		if len(n.Argv) > 0 && n.Argv[0] == "" {
			bad(key, "program name (first element) must not be empty")
		}
		argv(key, n.Argv, bad)
	}
	inRange(bad, "hooks.timeout_secs", h.TimeoutSecs, 1, maxSecs)
}

// validate reports the [setup] table's bad commands through bad.
func (s Setup) validate(bad func(key, format string, args ...any)) {
	for i, cmd := range s.Commands {
		key := fmt.Sprintf("setup.commands[%d]", i)
		if len(cmd) == 0 || cmd[0] == "" {
			bad(key, "must be a non-empty argv with a program name first")
		}
		argv(key, cmd, bad)
	}
}

// validateModels checks the model keys and max_pause.
func (a Agent) validateModels(bad func(key, format string, args ...any)) {
	for _, m := range []struct{ key, v string }{
		{"agent.model", a.Model}, {"agent.decompose_model", a.DecomposeModel},
		{"agent.execute_model", a.ExecuteModel}, {"agent.last_attempt_model", a.LastAttemptModel},
	} {
		if strings.ContainsRune(m.v, 0) {
			bad(m.key, "contains a NUL byte")
		}
	}
	if a.MaxPause.Duration < 0 {
		bad("agent.max_pause", "must be 0 (never pause) or more, got %s", a.MaxPause)
	}
}

// argv reports NUL bytes, which no argument of a process can hold.
func argv(key string, args []string, bad func(key, format string, args ...any)) {
	for i, a := range args {
		if strings.ContainsRune(a, 0) {
			bad(key, "element %d contains a NUL byte", i)
		}
	}
}

// AgentUnconfined reports whether the config.toml at path (with the
// overrides of the environment Load takes) runs the agent without a sandbox
// ([sandbox] mode = "none"): false when it is not there (Load would give
// the defaults) or cannot be read. Without one, a session can read
// whatever the runner can (git.Repo.StageFiles copies into the work tree
// only then).
func AgentUnconfined(path string) bool {
	if _, err := os.Stat(path); err != nil {
		return false
	}
	cfg, err := Load(path, os.LookupEnv)
	return err == nil && !cfg.Sandbox.Confined()
}

// Load reads the configuration file at path, then applies the environment
// overrides read through lookupEnv (os.LookupEnv in production). A missing
// file means the defaults; any other read error is returned. Errors name the
// file as path.
func Load(path string, lookupEnv func(string) (string, bool)) (Config, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return FromBytes(path, nil, lookupEnv)
	case err != nil:
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	return FromBytes(path, data, lookupEnv)
}

// FromBytes is Load for the bytes of a configuration file read elsewhere
// (e.g. from the commit a step started from): nil data means no
// file (the defaults). name is the file's name in errors.
func FromBytes(name string, data []byte, lookupEnv func(string) (string, bool)) (Config, error) {
	c := Default()
	var err error
	if data != nil {
		if c, err = Parse(name, data); err != nil {
			return Config{}, err
		}
	}
	c, err = c.ApplyEnv(lookupEnv)
	if err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// validate reports the [sandbox] table's bad keys through bad.
func (s Sandbox) validate(bad func(key, format string, args ...any)) {
	if s.Mode != SandboxNone && s.Mode != SandboxBwrap && s.Mode != SandboxDocker {
		bad("sandbox.mode", "must be %q, %q or %q, got %q", SandboxNone, SandboxBwrap, SandboxDocker, s.Mode)
	}
	if s.Engine != EngineDocker && s.Engine != EnginePodman {
		bad("sandbox.engine", "must be %q or %q, got %q", EngineDocker, EnginePodman, s.Engine)
	}
	if img := s.Image; img == "" || strings.HasPrefix(img, "-") || strings.IndexFunc(img, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		bad("sandbox.image", "must be an image name (no spaces, not starting with -), got %q", img)
	}
	if s.Network != NetworkHost && s.Network != NetworkNone {
		bad("sandbox.network", "must be %q or %q, got %q", NetworkHost, NetworkNone, s.Network)
	}
	for key, ps := range map[string][]string{"sandbox.writable": s.Writable, "sandbox.readable": s.Readable} {
		for i, p := range ps {
			if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~/") || strings.ContainsRune(p, 0) {
				bad(key, "element %d: %q must be an absolute path or start with ~/", i, p)
			}
		}
	}
}
