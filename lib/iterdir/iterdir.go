// Package iterdir is the iteration directory, .runner/iterations/<run>/<iter>/,
// the bus between the commands of one step (DESIGN.md "The commands"). Each
// command writes its record here as JSON; iter-log end gathers them into
// meta.json. All records carry "version": 1; readers ignore unknown keys.
package iterdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/layout"
)

// File names inside an iteration directory.
const (
	BeginFile      = "begin.json"       // iter-log begin
	PromptFile     = "prompt.md"        // context-write
	AgentFile      = "agent.json"       // agent-exec
	ExecutorLog    = "executor.log"     // agent-exec
	EventsLog      = "events.jsonl"     // agent-exec (CLI backends)
	OutputFile     = "output.json"      // the agent
	GuardFile      = "guard.json"       // guard-run
	GuardLog       = "guard.log"        // guard-run
	GuardFirstLog  = "guard.first.log"  // guard-run: its first run, when that changed what the iteration commits and the guard ran again
	ResultsDir     = "results"          // guard-run: the guard's tests by name ($RUNNER_TEST_RESULTS)
	WitnessDir     = "witness"          // guard-run: the witness's logs and results, base and new
	UpdateFile     = "update.json"      // tree-update
	AgentErrorLog  = "agent_error.log"  // tree-update
	RunnerErrorLog = "runner_error.log" // any command, on a runner error
	TreeBefore     = "tree.before.json" // iter-log begin, before begin.json's tree_blob (an older directory)
	TreeAfter      = "tree.after.json"  // iter-log end, before begin.json's tree_blob (an older directory)
	DiffPatch      = "diff.patch"       // iter-log end
	MetaFile       = "meta.json"        // iter-log end
	SealedFile     = "sealed.txt"       // agent-exec --restore --sealed
)

// Begin is begin.json: what iter-log begin allocated.
type Begin struct {
	Version     int       `json:"version"`
	RunID       string    `json:"run_id"`
	Iteration   int       `json:"iteration"`
	NodeID      string    `json:"node_id"`
	NodePath    string    `json:"node_path"`
	Mode        string    `json:"mode"` // execute | decompose
	Attempts    int       `json:"attempts"`
	MaxAttempts int       `json:"max_attempts"`
	StartedAt   time.Time `json:"started_at"`
	Deadline    time.Time `json:"deadline"`    // started_at + iteration_timeout_secs, shared by agent and guard
	HeadBefore  string    `json:"head_before"` // commit at the start of the iteration
	Branch      string    `json:"branch"`
	// TreeBlob is the tree iter-log begin read (tree.Encode of tree.json),
	// as a blob in git's object database: in a step, the tree.json
	// head_before holds. The iteration's log keeps no copy of the tree
	// (SnapshotTree); "" in an older directory, which has the copy in
	// tree.before.json.
	TreeBlob string `json:"tree_blob,omitempty"`
}

// Usage is the token and cost usage an agent CLI reported (0 when unknown).
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Agent is agent.json: one agent session.
type Agent struct {
	Version    int      `json:"version"`
	Backend    string   `json:"backend"`
	Argv       []string `json:"argv"`
	CLIVersion string   `json:"cli_version,omitempty"`
	Model      string   `json:"model,omitempty"`
	// ModelRule is the [agent] key that chose the model asked for:
	// model, decompose_model, execute_model or last_attempt_model.
	ModelRule string `json:"model_rule,omitempty"`
	// AutoCompaction: "off" where the CLI's automatic context compaction
	// was turned off, "on" where it has no switch; absent for command and
	// replay.
	AutoCompaction string `json:"auto_compaction,omitempty"`
	PromptSHA256   string `json:"prompt_sha256"`
	ExitCode       int    `json:"exit_code"`
	Signal         string `json:"signal,omitempty"`
	DurationMS     int64  `json:"duration_ms"`
	// StartedAt is when the session's process started, and InterruptedAt
	// when agent-exec learnt of a SIGINT, SIGTERM or the cancel file
	// (RFC 3339 with nanoseconds); each absent when it did not happen. A
	// session never starts after its interruption.
	StartedAt     string `json:"started_at,omitempty"`
	InterruptedAt string `json:"interrupted_at,omitempty"`
	// Class: ok, timeout, hang, interrupted, no_output, invalid_output,
	// auth, rate_limit, api_error, turn_limit, permission_denied,
	// spawn_error, protected_path, head_moved.
	Class       string   `json:"class"`
	Message     string   `json:"message,omitempty"`
	ResetAt     string   `json:"reset_at,omitempty"`
	Status      string   `json:"status,omitempty"` // the output's status when valid
	AgentErrors []string `json:"agent_errors"`     // reasons that make the iteration an agent error
	Usage       Usage    `json:"usage"`
	// CostFromPrices: usage.cost_usd was computed from the tokens at the
	// model's [agent.prices], the CLI reporting none.
	CostFromPrices bool  `json:"cost_from_prices,omitempty"`
	LogBytes       int64 `json:"log_bytes"`
	LogTruncated   bool  `json:"log_truncated"`
	// EscapedKilled counts processes the agent left running outside its
	// process group (setsid, double fork) that were killed when it ended;
	// Escaped says what they were (their command lines, as they present
	// themselves), and CLIHelpers how many of them were the agent CLI's
	// own helpers (its executable), not processes the agent started.
	EscapedKilled int      `json:"escaped_killed"`
	Escaped       []string `json:"escaped,omitempty"`
	CLIHelpers    int      `json:"cli_helpers,omitempty"`
	// Cancel is set when .runner/cancel appeared during the session: by
	// the operator (lib/cancel.Request) or by the session itself (issue
	// 17: void, an agent error).
	Cancel *cancel.Verdict `json:"cancel,omitempty"`
	// Sandbox is the [sandbox] mode the session ran under: "bwrap" or
	// "docker"; empty when it was not confined.
	Sandbox string `json:"sandbox,omitempty"`
	// Contained is what held the session's processes (vocab.Containment:
	// pid-namespace, bwrap, container, subreaper); empty when none ran.
	Contained string `json:"contained,omitempty"`
	// SandboxStarts is how many times the sandbox was started for the
	// session when more than once: bubblewrap's start failed before the
	// command ran (a mount going away as it copied the view of /) and it
	// was started again (proc.MaxStarts at most); absent for one start.
	SandboxStarts int `json:"sandbox_starts,omitempty"`
	// NodeTools says what the node's tools.json set for this session
	// (lib/nodetools: model, extra arguments, the environment's keys,
	// allowed tools); absent without one.
	NodeTools string `json:"node_tools,omitempty"`
	// Fallbacks are the hand-overs to [agent] fallback backends, in order
	//; Backend is the one that ran last.
	Fallbacks []Fallback `json:"fallbacks,omitempty"`
}

// Fallback is one hand-over from a backend that ended in a rate limit or
// refused authentication to the next of [agent] fallback.
type Fallback struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Class   string `json:"class"` // rate_limit | auth
	Message string `json:"message,omitempty"`
}

// Guard is guard.json: one guard run.
type Guard struct {
	Version    int      `json:"version"`
	Argv       []string `json:"argv"`
	Outcome    string   `json:"outcome"` // pass | fail | timeout | interrupted | error
	ExitCode   int      `json:"exit_code"`
	Signal     string   `json:"signal,omitempty"`
	DurationMS int64    `json:"duration_ms"`
	// StartedAt is when the guard's process started, and InterruptedAt
	// when guard-run learnt of a SIGINT, SIGTERM or the cancel file (RFC
	// 3339 with nanoseconds); each absent when it did not happen.
	StartedAt     string `json:"started_at,omitempty"`
	InterruptedAt string `json:"interrupted_at,omitempty"`
	Message       string `json:"message,omitempty"`
	LogBytes      int64  `json:"log_bytes"`
	LogTruncated  bool   `json:"log_truncated"`
	// EscapedKilled counts processes the guard left running outside its
	// process group (setsid, double fork) that were killed when it ended;
	// Escaped says what they were.
	EscapedKilled int      `json:"escaped_killed"`
	Escaped       []string `json:"escaped,omitempty"`
	// Cancel: as in Agent, for the guard's run.
	Cancel  *cancel.Verdict `json:"cancel,omitempty"`
	Sandbox string          `json:"sandbox,omitempty"` // "bwrap" or "docker" when the guard ran confined
	// Contained: as in Agent, for the guard's processes.
	Contained string `json:"contained,omitempty"`
	// SandboxStarts: as in Agent, for the guard's run.
	SandboxStarts int `json:"sandbox_starts,omitempty"`
	// Ratchet is the test ratchet's verdict after a green guard; nil when
	// [guard] ratchet is off or the guard did not pass.
	Ratchet *Ratchet `json:"ratchet,omitempty"`
	// Notes are what the runner saw in the guard's run and tells the
	// reader without failing it (a new TestMain or test-file init).
	Notes []string `json:"notes,omitempty"`
	// Evidence is the verdict on the guard's tests by name (DESIGN.md
	// decision 24); nil when [guard] results is off.
	Evidence *Evidence `json:"evidence,omitempty"`
}

// Evidence is what a guard's tests by name say of its run (DESIGN.md
// decisions 24 and 25), in guard.json.
type Evidence struct {
	// Level is what the node needed beside a green guard: witness, suite
	// or proposed-suite (tree.Evidence*); LevelFrom says who decided it:
	// "node" (the operator, or the agent that proposed the node),
	// "suite_nodes" or "config" ([guard] evidence). Empty for a run that
	// judges no node (a baseline).
	Level     string `json:"level,omitempty"`
	LevelFrom string `json:"level_from,omitempty"`
	// Reads is how a pass at Level reads wherever it is shown
	// (evidence.Describe): "witnessed", "suite only (...)".
	Reads string `json:"reads,omitempty"`
	// Sources are the results files read (relative to the results
	// directory) and "output" when the guard's output reported tests;
	// Unreadable the files that could not be read, with why.
	Sources    []string `json:"sources"`
	Unreadable []string `json:"unreadable,omitempty"`
	// Passed, Failed, Errors and Skipped count the tests by status.
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
	// Failing names up to 50 tests that failed or could not run.
	Failing []string `json:"failing,omitempty"`
	// PassToPass is how many tests passed before (at the run's last pass
	// or baseline) and must pass again, and Missing those that did not
	// (not run, skipped, failed).
	PassToPass int      `json:"pass_to_pass"`
	Missing    []string `json:"missing,omitempty"`
	// Witness is the failing-then-passing check of an execute leaf at
	// level witness; nil when none ran.
	Witness *Witness `json:"witness,omitempty"`
	// Caches is the guard's caches: "private" or "shared"; CachesWiped
	// says the private ones had changed since the guard last ran and were
	// emptied; Removed lists the build outputs a session left in the work
	// tree that were removed before the guard ran. CachesSeeded says the
	// empty Go build cache started from the runner's compiled standard
	// library (a seed no session could write).
	Caches       string   `json:"caches,omitempty"`
	CachesWiped  bool     `json:"caches_wiped,omitempty"`
	CachesSeeded bool     `json:"caches_seeded,omitempty"`
	Removed      []string `json:"removed,omitempty"`
	// Held: every check passed, the guard's pass stands.
	Held bool `json:"held"`
	// PassedNames are the tests that passed (not in guard.json: the
	// runner keeps them in layout.TestsPassed once the pass stands).
	PassedNames []string `json:"-"`
}

// Cited is a guard's evidence in brief: what a pass is cited by wherever
// it is shown (runner-status, iter-log, the pull-request body) and what
// loop-commit's trailers keep of it in git (lib/evidence words it).
type Cited struct {
	// Level is Evidence.Level (witness, suite or proposed-suite); ""
	// when the run judged no node.
	Level string `json:"level"`
	// Held: the guard's pass stands on this evidence.
	Held bool `json:"held"`
	// Passed, Failed, Errors and Skipped count the tests by status.
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
	// PassToPass is how many tests passed before and had to pass again,
	// PassedAgain how many of them did.
	PassToPass  int `json:"pass_to_pass"`
	PassedAgain int `json:"passed_again"`
	// Witnesses are the witness tests (FAIL_TO_PASS); Unlisted counts
	// those a commit's trailers name only by number.
	Witnesses []string `json:"witnesses"`
	Unlisted  int      `json:"-"`
}

// Cite is e in brief; nil for a nil e.
func (e *Evidence) Cite() *Cited {
	if e == nil {
		return nil
	}
	c := &Cited{Level: e.Level, Held: e.Held, Passed: e.Passed, Failed: e.Failed, Errors: e.Errors, Skipped: e.Skipped,
		PassToPass: e.PassToPass, PassedAgain: e.PassToPass - len(e.Missing), Witnesses: []string{}}
	if e.Witness != nil {
		c.Witnesses = append(c.Witnesses, e.Witness.Tests...)
	}
	return c
}

// Witness is the witness check's record: the node's test files laid over
// the code its work began from, in a scratch checkout, run there.
type Witness struct {
	// NodeBase is the commit the node's work began from, Commits the
	// node's iteration commits before this one (newest first).
	NodeBase string   `json:"node_base"`
	Commits  []string `json:"commits,omitempty"`
	// Files are the test files the node added or changed.
	Files []string `json:"files"`
	Argv  []string `json:"argv"`
	// Tests are the witnesses: tests of those files that did not pass on
	// the base code and pass on the new code, in the guard.
	Tests []string `json:"tests"`
	// BaseExit is the exit code of the run on the base code, BaseTests how
	// many tests by name it reported.
	BaseExit   int   `json:"base_exit"`
	BaseTests  int   `json:"base_tests"`
	DurationMS int64 `json:"duration_ms"`
}

// Ratchet is the test ratchet's record in guard.json.
type Ratchet struct {
	Argv       []string `json:"argv"`
	Count      int      `json:"count"`                 // tests passed now; -1 when the command gave no count
	Best       int      `json:"best"`                  // best count of the run before this iteration; -1 when none was recorded
	BestCommit string   `json:"best_commit,omitempty"` // the commit that recorded Best
	ExitCode   int      `json:"exit_code"`
	DurationMS int64    `json:"duration_ms"`
	Held       bool     `json:"held"` // the count is not below the best: the guard's pass stands
	// Names is how many tests the guard's output reports passing (go
	// test -json or -v), -1 when it reports none; Failed and Missing name
	// the tests it reports failing and those of the run's best that did
	// not pass (either fails the guard).
	Names   int      `json:"names"`
	Failed  []string `json:"failed,omitempty"`
	Missing []string `json:"missing,omitempty"`
	// Passed is the names that passed (not in guard.json: the runner
	// keeps them in layout.TestsPassed once the guard's pass stands).
	Passed []string `json:"-"`
}

// Update is update.json: what tree-update decided, and what it prints.
type Update struct {
	Version     int      `json:"version"`
	Result      string   `json:"result"` // passed, failed, retry, decomposed, blocked, agent-error, timeout, interrupted, runner-error, paused
	ID          string   `json:"id"`
	Passes      bool     `json:"passes"`
	Attempts    int      `json:"attempts"`
	MaxAttempts int      `json:"max_attempts"`
	Children    []string `json:"children"`
	Reasons     []string `json:"reasons"`
	Summary     string   `json:"summary"`
	Guard       string   `json:"guard"` // the guard outcome applied: pass, fail, skipped
}

// Write stores v as a JSON document (jsondoc.Marshal) in dir/name,
// atomically.
func Write(dir, name string, v any) error {
	data, err := jsondoc.Marshal(v)
	if err != nil {
		return err
	}
	return fsutil.WriteAtomic(filepath.Join(dir, name), data, 0o644)
}

// WriteAfter is Write made once first has returned
// (fsutil.WriteAtomicAfter): the record is written and fsynced while
// first runs, and appears only after first succeeded. firstErr is first's
// error (the record is then not written), err the record's.
func WriteAfter(dir, name string, v any, first func() error) (firstErr, err error) {
	data, err := jsondoc.Marshal(v)
	if err != nil {
		return nil, err
	}
	return fsutil.WriteAtomicAfter(filepath.Join(dir, name), data, 0o644, first)
}

// Read loads dir/name into v. A missing file gives an error wrapping
// os.ErrNotExist.
func Read(dir, name string, v any) error {
	data, err := fsutil.ReadFile(filepath.Join(dir, name), "", 16<<20)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Exists reports whether dir/name exists.
func Exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return !errors.Is(err, os.ErrNotExist)
}

// LoadBegin reads the iteration's begin.json, with a message that says what
// to run when it is missing.
func LoadBegin(dir string) (Begin, error) {
	var b Begin
	if err := Read(dir, BeginFile, &b); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return b, fmt.Errorf("%s has no %s: pass the directory printed by iter-log begin", dir, BeginFile)
		}
		return b, err
	}
	return b, nil
}

// UsageBefore is the run's usage before iteration n (runDir is
// .runner/iterations/<run-id>): the run_usage iter-log end recorded in
// iteration n-1's meta.json, the sum through n-1, so that a step reads
// one file however long the run. Without that record (the
// first iteration, a meta.json missing, unreadable, of another run or
// iteration, or written before run_usage existed) it sums the agent.json
// of every iteration below n. meta.json is the runner's and as safe as
// the agent.json files: both are committed with their iteration and
// sealed while a session runs.
func UsageBefore(runDir string, n int) (Usage, error) {
	if n > 1 {
		var m struct {
			RunID     string `json:"run_id"`
			Iteration int    `json:"iteration"`
			RunUsage  *Usage `json:"run_usage"`
		}
		err := Read(filepath.Join(runDir, layout.IterName(n-1)), MetaFile, &m)
		if err == nil && m.RunUsage != nil && m.Iteration == n-1 && m.RunID == filepath.Base(runDir) {
			return *m.RunUsage, nil
		}
	}
	return sumUsage(runDir, n)
}

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CachedTokens: u.CachedTokens + v.CachedTokens, CostUSD: u.CostUSD + v.CostUSD,
	}
}

// RunUsage sums the usage recorded in agent.json by every iteration of a
// run (runDir is .runner/iterations/<run-id>); directories set aside by a
// recovery and iterations without an agent.json count nothing.
func RunUsage(runDir string) (Usage, error) { return sumUsage(runDir, 0) }

// sumUsage is RunUsage over the iterations below before (all when 0).
func sumUsage(runDir string, before int) (Usage, error) {
	var sum Usage
	entries, err := os.ReadDir(runDir)
	if errors.Is(err, fs.ErrNotExist) {
		return sum, nil
	}
	if err != nil {
		return sum, err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.Trim(e.Name(), "0123456789") != "" {
			continue
		}
		if n, err := strconv.Atoi(e.Name()); before > 0 && (err != nil || n >= before) {
			continue
		}
		var a Agent
		if err := Read(filepath.Join(runDir, e.Name()), AgentFile, &a); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return sum, err
		}
		sum = sum.Add(a.Usage)
	}
	return sum, nil
}
