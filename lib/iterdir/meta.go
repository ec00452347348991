package iterdir

import "time"

// Meta is meta.json (seed 000 §11): the record of one iteration, written by
// iter-log end and completed with the commit sha by loop-commit.
type Meta struct {
	Version   int    `json:"version"`
	RunID     string `json:"run_id"`
	Iteration int    `json:"iteration"`
	NodeID    string `json:"node_id"`
	NodePath  string `json:"node_path"`
	Mode      string `json:"mode"` // execute | decompose
	// Status: done | retry | decomposed | blocked | timeout | interrupted |
	// runner_error | paused (an agent error is status retry with
	// AgentError true).
	Status string `json:"status"`
	// Result is tree-update's: passed, failed, retry, decomposed, blocked,
	// agent-error, timeout, interrupted, runner-error, paused.
	Result         string   `json:"result"`
	Guard          string   `json:"guard"` // pass | fail | skipped (timeout | interrupted | error when the guard did not finish)
	AgentError     bool     `json:"agent_error"`
	Reasons        []string `json:"reasons"`
	AttemptsBefore int      `json:"attempts_before"`
	AttemptsAfter  int      `json:"attempts_after"`
	MaxAttempts    int      `json:"max_attempts"`
	Passes         bool     `json:"passes"`
	// Summary is the agent's summary (or the agent-error reasons), as
	// tree-update recorded it; the commit message carries it in its body.
	Summary    string    `json:"summary"`
	StartedAt  time.Time `json:"started_at"`
	EndedAt    time.Time `json:"ended_at"`
	DurationMS int64     `json:"duration_ms"`
	Agent      *Agent    `json:"agent"`     // agent.json, nil when the agent did not run
	GuardRun   *Guard    `json:"guard_run"` // guard.json, nil when the guard did not run
	// RunUsage sums the usage of the run's sessions so far, this one
	// included (what the run budgets are checked against).
	RunUsage   Usage  `json:"run_usage"`
	HeadBefore string `json:"head_before"`
	// StagedTree is the tree of the index iter-log end staged (git
	// write-tree; diff.patch is head_before's diff to it), and StagedIndex
	// the index file's stamp right after (git.IndexStamp); loop-commit
	// --as-staged commits that tree while the index is still that file,
	// without writing it again. Both "" when not recorded (an older meta.json, an
	// index git keeps elsewhere than .git/index, a failed write-tree):
	// loop-commit then writes the tree itself.
	StagedTree  string `json:"staged_tree"`
	StagedIndex string `json:"staged_index"`
	Commit      string `json:"commit"`
}
