// Package layout names the files of a treeloop repository (seed 000 §3,
// DESIGN.md decision 1). Paths are relative to the repository root, with
// forward slashes.
package layout

import (
	"fmt"
	"path"
)

// The .runner layout.
const (
	Runner            = ".runner"
	Goal              = ".runner/GOAL.md"
	State             = ".runner/state"
	Tree              = ".runner/state/tree.json"
	Schema            = ".runner/state/schema.json"
	AgentOutputSchema = ".runner/state/agent_output.schema.json"
	RunState          = ".runner/state/run_state.json"
	Config            = ".runner/state/config.toml"
	TestsPassed       = ".runner/state/tests_passed.txt" // the tests that passed at the run's last pass or baseline (PASS_TO_PASS, the ratchet), runner-owned
	GuardCache        = ".runner/state/guard_cache.txt"  // the digest of the guard's private caches after its last run, runner-owned
	Assumptions       = ".runner/state/assumptions.md"
	Questions         = ".runner/state/questions.md"
	Context           = ".runner/context"
	Iterations        = ".runner/iterations"
	Nodes             = ".runner/nodes"
	Cancel            = ".runner/cancel"
	Lock              = ".runner/lock"
	Runs              = ".runner/runs"
	Gitignore         = ".runner/.gitignore"
	Worktrees         = ".runner/worktrees" // runs in worktrees of their own (runner-start --worktree), ignored
	// Answers holds the operator's answers queued while a runner works
	// (tree-edit answer), until the runner commits them between
	// iterations; ignored.
	Answers = ".runner/answers"
)

// IterName is the directory name of iteration n: four digits at least, so
// listings sort in order.
func IterName(n int) string { return fmt.Sprintf("%04d", n) }

// IterDir is the log directory of iteration n of run runID.
func IterDir(runID string, n int) string { return path.Join(Iterations, runID, IterName(n)) }

// RunRecord is the record of run runID (seed 004 "run records", DESIGN.md
// decision 15).
func RunRecord(runID string) string { return path.Join(Runs, runID+".json") }

// Worktree is the default worktree directory of run runID.
func Worktree(runID string) string { return path.Join(Worktrees, runID) }

// NodeContext is a node's context sidecar (seed 000 §3.4).
func NodeContext(id string) string { return path.Join(Nodes, id, "context.md") }

// NodeTools is a node's agent settings sidecar (seed 000 §3.4,
// schemas/node_tools.v1.schema.json): the operator's, never an agent's.
func NodeTools(id string) string { return path.Join(Nodes, id, "tools.json") }

// NodeToolsGlob matches every node's tools.json.
const NodeToolsGlob = Nodes + "/*/tools.json"

// NodeArtifacts is the directory of the files sessions save for a node
// (seed 000 §3.4): reports, screenshots, benchmarks.
func NodeArtifacts(id string) string { return path.Join(Nodes, id, "artifacts") }

// BranchPrefix starts every run branch: runner/<run-id>.
const BranchPrefix = "runner/"
