package config

import (
	"fmt"
	"slices"
	"strings"
)

// defaultTOML is the file runner-init writes; Parse of it gives Default().
const defaultTOML = `# treeloop runner configuration (.runner/state/config.toml).
# Every key is optional: a key left out takes the value shown here.
# Unknown keys are errors. Environment variables override some keys:
# RUNNER_AGENT, RUNNER_AGENT_BIN, RUNNER_AGENT_MODEL, RUNNER_AGENT_EXTRA_ARGS,
# RUNNER_AGENT_CASSETTE, RUNNER_AGENT_PERMISSION_MODE, RUNNER_MAX_ITERATIONS,
# RUNNER_ITERATION_TIMEOUT_SECS.

# Attempts budget given to new nodes (>= 1).
max_attempts_default = 3

# What the loop does with a leaf that has used all its attempts: "stop" the
# run (stuck); "skip" it and go on with the next leaf it can work, ending
# stuck only when no other leaf is left; or "decompose": send it back to the
# agent once in decompose mode, to split it into smaller children or rewrite
# it as one (a leaf sent back before stops the run).
stuck_policy = "stop"

# Iterations per run before the loop stops with the limit code (>= 1).
max_iterations = 100

# One wall-clock budget per iteration, in seconds, shared by the agent and
# the guard (>= 1). A timeout stops the run.
iteration_timeout_secs = 1800

# Stop an agent that prints nothing for this many seconds (0 = off).
agent_idle_timeout_secs = 600

# Caps on the captured output of the agent and of the guard, in bytes (> 0).
executor_output_limit_bytes = 100000
guard_output_limit_bytes = 100000

# Byte budget of the prompt pack (>= 4096).
prompt_budget_bytes = 40000

# Cap on what a node's artifacts directory (.runner/nodes/<id>/artifacts/:
# reports, screenshots, benchmarks a session saves for its node) holds, in
# bytes (0 = none allowed). A session that leaves more is an agent error
# and the directory goes back to what it was.
artifacts_limit_bytes = 1048576

# Globs (path.Match syntax, relative to the repository root; "*" does not
# cross a "/", an element "**" matches any number of directories; a glob
# also covers everything under a directory it matches) the agent must not
# change, in addition to the runner's own state files. An entry starting
# with "append-only:" (e.g. "append-only:tests") lets the agent add new
# files there but not change or delete the files that exist. An entry
# FILE#KEY (FILE a .toml, .json, .ini or .cfg file, e.g.
# "pyproject.toml#tool.pytest") protects the value at KEY alone: the rest
# of the file is the agent's, and a change at KEY puts the whole file back.
protected_paths = ["justfile", "Justfile", ".justfile"]

[guard]
# The guard command, as an argv (not run through a shell); non-empty.
command = ["just", "ci"]
# Test ratchet, as an argv: prints how many tests passed (its last line, a
# number), run after every green guard with RUNNER_GUARD_LOG naming the
# guard's log. A node passes only when the count is not below the best seen
# in the run. Empty = off.
ratchet = []
# Tests by name: "auto" reads the files the guard writes into the
# directory $RUNNER_TEST_RESULTS names (JUnit XML, jest's JSON, go test
# -json) and its own output (go test -json or -v, cargo test), and a node
# passes only when every test that passed before still passes and, for an
# execute leaf, a test it added or changed fails without its work (the
# witness); a guard that reports no test by name fails. "off": the guard's
# exit status alone. An argv element may hold ${RUNNER_TEST_RESULTS}.
results = "off"
# The command that runs the given test files alone, reporting them by name:
# an element "${RUNNER_TEST_FILES}" stands for the test files the node
# added or changed, "${RUNNER_TEST_DIRS}" for their directories ("./dir").
# It runs in a scratch checkout, once on the code before the node's work
# and once after. Empty = the guard's command (the whole suite).
witness = []
# The test files a witness is sought among (globs; "**" crosses
# directories).
test_files = ["**/*_test.go", "**/test_*.py", "**/*_test.py", "**/tests/**/*.py", "**/*.test.*", "**/*.spec.*", "**/__tests__/**", "**/tests/**/*.rs", "**/spec/**/*_spec.rb", "**/test/**/*_test.rb", "**/src/test/**", "**/test/**/*.{js,cjs,mjs,ts}"]
# What an execute leaf needs to pass when its node does not say: "witness"
# (a test that fails without its work) or "suite" (the suite alone, shown
# as a weaker pass). suite_nodes: node id globs that default to "suite"
# (docs, configuration, refactoring).
evidence = "witness"
suite_nodes = []
# "private": the guard gets build caches of its own (Go's build cache,
# Python's bytecode, cargo's target directory, a fresh TMPDIR) that no
# session can write; "shared": it uses yours, as a session left them.
caches = "private"

[agent]
# One of: command, codex, claude, opencode, gemini, replay.
backend = "command"
# Executable; empty = the backend's default binary name.
bin = ""
# Model name passed to the backend; empty = the backend's default.
model = ""
# Extra arguments appended to the backend's invocation.
extra_args = []
# Models by mode and attempt; empty = model. decompose_model for
# decomposition sessions, execute_model for execution sessions, and
# last_attempt_model for the last attempt of a leaf (escalation: it wins
# over the other two).
decompose_model = ""
execute_model = ""
last_attempt_model = ""
# On a usage or rate limit: "stop" the session at once, or "wait" for the
# reset within the iteration's budget first. Either way, once no fallback
# is left the iteration is committed as paused (no attempt consumed) and
# runner-loop pauses the run until the limit resets (runner-loop
# --no-pause stops instead). An outage (the provider unreachable or
# failing on its side) pauses the run likewise, for a backoff.
on_rate_limit = "stop"
# What the agent CLI may do without asking: "full" (every tool, no sandbox
# of the CLI's own: the guard, the runner's checks and [sandbox] are the
# boundary), "edits" (file edits, no shell commands; codex runs them in its
# workspace-write sandbox) or "read-only" (the CLI's plan or read-only
# mode: nothing written). The command backend gets it as
# RUNNER_AGENT_PERMISSION_MODE and enforces nothing.
permission_mode = "full"
# The longest one runner-loop pauses on usage limits and outages in all,
# as seconds or a duration ("12h", "90m"); a reset reported beyond it is
# capped at it; once it is used up, the loop stops with the limit code.
# 0 = never pause.
max_pause = "12h"
# Failures a session reports about itself (a usage limit or an API error
# a CLI claims, any failure report of a command agent) that may come in a
# row on one node and cost no attempt; each further one in the row costs
# an attempt (0 = every one does). A CLI's own connection failures are
# not counted: max_pause bounds them.
max_reported_failures = 3
# Run budgets; 0 = unlimited. runner-check refuses one nothing measures:
# max_tokens needs a backend that reports tokens, max_cost_usd one that
# reports cost (claude) or a price for the model below.
max_tokens = 0
max_cost_usd = 0.0
# A directory outside the repository: every session is recorded there
# (its changes, output and events, by iteration), and the replay backend
# plays a recording back. Empty = off.
cassette = ""
# Backends that take over, in order, when a session ends in a rate limit,
# an outage or refused authentication, with what is left of the
# iteration's budget, each with its default executable and model: e.g.
# ["codex", "claude"]. on_rate_limit applies once the list is used up.
fallback = []
# Prices in US dollars per million tokens, by model name: the cost of a
# session whose CLI reports none (codex, opencode, gemini) is computed from
# its tokens, so max_cost_usd can stop the run. For example:
#   prices = { "gpt-5" = { input = 1.25, cached_input = 0.125, output = 10.0 } }
prices = {}

[hooks]
# Notifications: commands (argv, not run through a shell) run with the run
# record as JSON on stdin and RUNNER_EVENT, RUNNER_RUN_ID, RUNNER_STATUS,
# RUNNER_REASON, RUNNER_RECORD, RUNNER_ROOT in the environment. Empty = none.
# A hook that fails or runs past timeout_secs is logged in the run record
# (.runner/runs/<id>.json) and never stops the loop.
on_iteration = []  # after every committed iteration
on_complete = []   # the tree is complete
on_stuck = []      # a leaf has no attempts left
on_limit = []      # max_iterations or a run budget reached
on_error = []      # the run ended on an error or a timeout
on_question = []   # an agent asked the operator (RUNNER_QUESTION): a leaf waits
on_pause = []      # a usage limit or an outage paused the run (RUNNER_PAUSE_UNTIL, RUNNER_PAUSE_REASON)
timeout_secs = 30

[sandbox]
# "none": the agent runs with your permissions. "bwrap": bubblewrap confines
# it: the filesystem read-only except the repository, a private /tmp and
# the writable paths below; your home directory hidden except the readable
# paths; .git and the runner's own files read-only; its own PID namespace.
# "docker": the same in a fresh container of the engine below for every
# session, which sees only the image, the repository and the paths below.
mode = "none"
# Mode "docker": "docker" or "podman", and the image. The default image,
# treeloop-host, runs the host's own /usr and /etc read-only (build it with
# runner-check --build-image); any other image runs as it is.
engine = "docker"
image = "treeloop-host"
# Confine the guard the same way (it runs the tests the agent wrote):
# false only if you accept that those run with your permissions.
guard = true
# "host" (agent CLIs need their API) or "none" (no network at all).
network = "host"
# Absolute or ~/ paths the sandboxed command may write (a CLI's home, a
# build cache), and paths it may read (under the hidden home; with mode
# "docker", anywhere).
writable = []
readable = []

[setup]
# Commands (argvs) run in order once before a run's first iteration, and
# again in each new worktree (runner-start --worktree): installing
# dependencies, say [["npm", "ci"]]. Output goes to the run's setup.log;
# a failure stops runner-start with a runner error naming the command.
commands = []
`

// DefaultTOML returns the commented default config.toml that runner-init
// writes. Parse of it returns Default().
func DefaultTOML() []byte { return []byte(defaultTOML) }

// Choices are runner-init's choices for a new config.toml: the agent's
// backend, the sandbox and its paths, and what it found about the
// repository (lib/ecosystem). A nil or empty field keeps the default.
type Choices struct {
	Backend  string   // [agent] backend
	Mode     string   // [sandbox] mode
	Writable []string // [sandbox] writable
	Readable []string // [sandbox] readable
	Guard    []string // [guard] command
	Results  string   // [guard] results
	Witness  []string // [guard] witness
	// Protected is added to protected_paths' default entries.
	Protected []string
}

// WithChoices is the default config.toml text (toml) with the choices
// written in; the rest, comments included, as DefaultTOML has it.
func WithChoices(toml []byte, c Choices) []byte {
	s := string(toml)
	set := func(line, value string) {
		s = strings.Replace(s, "\n"+line+"\n", "\n"+strings.SplitN(line, " = ", 2)[0]+" = "+value+"\n", 1)
	}
	if c.Backend != "" {
		set(`backend = "command"`, tomlString(c.Backend))
	}
	if c.Mode != "" {
		set(`mode = "none"`, tomlString(c.Mode))
	}
	if len(c.Writable) > 0 {
		set("writable = []", tomlArray(c.Writable))
	}
	if len(c.Readable) > 0 {
		set("readable = []", tomlArray(c.Readable))
	}
	if len(c.Guard) > 0 {
		set(`command = ["just", "ci"]`, tomlArray(c.Guard))
	}
	if c.Results != "" {
		set(`results = "off"`, tomlString(c.Results))
	}
	if len(c.Witness) > 0 {
		set("witness = []", tomlArray(c.Witness))
	}
	if len(c.Protected) > 0 {
		set(`protected_paths = ["justfile", "Justfile", ".justfile"]`, tomlArray(append(slices.Clone(Default().ProtectedPaths), c.Protected...)))
	}
	return []byte(s)
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlArray is ss as a TOML array of strings, on one line (as every
// value of the file is).
func tomlArray(ss []string) string {
	q := make([]string, len(ss))
	for i, x := range ss {
		q[i] = tomlString(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
