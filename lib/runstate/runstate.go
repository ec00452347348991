// Package runstate reads and writes .runner/state/run_state.json, the run and
// iteration bookkeeping of seed 000 §3.1, validated against the embedded
// run_state v1 schema.
package runstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
)

// State is run_state.json. Pointers are JSON null when nil.
type State struct {
	RunID       *string `json:"run_id"`
	NextIter    int     `json:"next_iter"`
	LastStatus  *string `json:"last_status"`  // done, retry, decomposed, agent_error, timeout, interrupted (a runner error leaves last_* as they were)
	LastSummary *string `json:"last_summary"` // the agent's summary, or the agent-error reasons
	LastGuard   *string `json:"last_guard"`   // pass, fail, skipped
	LastIter    *int    `json:"last_iter"`
	LastNode    *string `json:"last_node"`
}

// New is the state of a fresh run id.
func New(runID string) State {
	s := State{NextIter: 1}
	if runID != "" {
		s.RunID = &runID
	}
	return s
}

// Str returns a pointer to s (for the optional fields).
func Str(s string) *string { return &s }

// Val returns *p or "" when nil.
func Val(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// check is the schema's plain check (check_gen.go, generated from
// schemas/run_state.v1.schema.json).
//
//go:generate go run ../schema/internal/schemagen -schema run_state.v1 -check check -o check_gen.go -what "/run_id=a run id"

// Parse decodes and validates run_state.json bytes.
func Parse(data []byte) (State, error) {
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return State{}, err
	}
	if why := check(v); why != "" {
		// The full validator words the problem where it is linked; the
		// commands that only read the file the runner wrote do not link
		// it and say the first problem check found.
		if vs, _ := schema.Words(schema.RunState, v); len(vs) > 0 {
			return State{}, fmt.Errorf("%s: %s", vs[0].Pointer, vs[0].Message)
		}
		return State{}, errors.New(why)
	}
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return State{}, err
	}
	return s, nil
}

// Load reads and validates the file at path.
func Load(path string) (State, error) {
	data, err := fsutil.ReadFile(path, "", 1<<20)
	if err != nil {
		return State{}, err
	}
	s, err := Parse(data)
	if err != nil {
		return State{}, fmt.Errorf("run_state.json: %w", err)
	}
	return s, nil
}

// Encode returns the canonical bytes of s: keys in schema order, 2-space
// indent, trailing newline.
func Encode(s State) []byte {
	data, _ := jsondoc.Marshal(s) // a State always encodes
	return data
}

// Save writes s to path atomically.
func Save(path string, s State) error {
	return fsutil.WriteAtomic(path, Encode(s), 0o644)
}
