package iterdir

import (
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/vocab"
)

// The phases of an iteration in progress, as the files the step has
// written so far tell them.
const (
	PhaseAgent  = string(vocab.PhaseAgent)  // begin.json written, the agent's session not ended (no agent.json)
	PhaseGuard  = string(vocab.PhaseGuard)  // the session ended and the guard runs (guard.log, no guard.json)
	PhaseRecord = string(vocab.PhaseRecord) // agent and guard ended: the tree update, the log and the commit
)

// Running is the iteration in progress (runner-status, iter-log list).
// Its fields are read from files a session can write (begin.json,
// agent.json, guard.log while it runs): they are shown, never acted on.
type Running struct {
	Iteration   int       `json:"iteration"`
	NodeID      string    `json:"node_id"`
	NodePath    string    `json:"node_path"`
	Mode        string    `json:"mode"`
	Attempt     int       `json:"attempt"` // this iteration's attempt on the node: attempts before it + 1
	MaxAttempts int       `json:"max_attempts"`
	Since       time.Time `json:"since"` // the iteration's start
	Phase       string    `json:"phase"` // agent, guard, record
}

// Last is runDir's (.runner/iterations/<run>) last iteration when it has
// begun (begin.json) and has no meta.json yet: in progress while a runner
// holds the lock, else left unfinished (the next runner-step recovers
// it). nil when the last iteration is finished or there is none.
func Last(runDir string) (*Running, error) { return LastFrom(runDir, 0) }

// LastFrom is Last with the run's last iteration number as a hint (see
// LastIter; < 1 when unknown).
func LastFrom(runDir string, hint int) (*Running, error) {
	last, err := LastIter(runDir, hint)
	if err != nil || last == 0 {
		return nil, err
	}
	dir := filepath.Join(runDir, layout.IterName(last))
	if Exists(dir, MetaFile) {
		return nil, nil
	}
	b, err := LoadBegin(dir)
	if errors.Is(err, fs.ErrNotExist) || (err != nil && !Exists(dir, BeginFile)) {
		return nil, nil // allocated, begin.json not written yet
	}
	if err != nil {
		return nil, err
	}
	r := &Running{
		Iteration: b.Iteration, NodeID: b.NodeID, NodePath: b.NodePath, Mode: b.Mode,
		Attempt: b.Attempts + 1, MaxAttempts: b.MaxAttempts, Since: b.StartedAt.UTC(), Phase: PhaseAgent,
	}
	switch {
	case Exists(dir, GuardFile):
		r.Phase = PhaseRecord
	case Exists(dir, GuardLog):
		r.Phase = PhaseGuard
	case Exists(dir, AgentFile):
		r.Phase = PhaseRecord
	}
	return r, nil
}
