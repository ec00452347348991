// Package runstate reads and writes .runner/state/run_state.json, the run and
// iteration bookkeeping of seed 000 §3.1, validated against the embedded
// run_state v1 schema.
package runstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
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

// Parse decodes and validates run_state.json bytes.
func Parse(data []byte) (State, error) {
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return State{}, err
	}
	if why := check(v); why != "" {
		// The full validator words the problem where it is linked; the
		// commands that only read the file the runner wrote do not link
		// it (issue 16) and say the first problem check found.
		if !schema.Linked() {
			return State{}, errors.New(why)
		}
		if vs := schema.Validate(schema.RunState, v); len(vs) > 0 {
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(s)
	return buf.Bytes()
}

// Save writes s to path atomically.
func Save(path string, s State) error {
	return fsutil.WriteAtomic(path, Encode(s), 0o644)
}

// check is schemas/run_state.v1.schema.json written out for a decoded
// document: "" when the schema accepts v, else the first problem as
// "<pointer>: <what>". TestCheckAgreesWithSchema holds it to the full
// validator.
func check(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "/: not a JSON object"
	}
	for _, k := range []string{"run_id", "next_iter", "last_status", "last_summary", "last_guard"} {
		if _, ok := m[k]; !ok {
			return "/: missing property " + k
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first problem is the same every time
	for _, k := range keys {
		x := m[k]
		bad := ""
		switch k {
		case "run_id":
			if s, ok := x.(string); x != nil && (!ok || !tree.ValidID(s)) {
				bad = "not null or a run id"
			}
		case "next_iter":
			if !integerAtLeast1(x) {
				bad = "not an integer >= 1"
			}
		case "last_status":
			// An iteration status, or agent_error (the schema's word here
			// for an agent error's retry: context-write tells the next
			// session so).
			if !oneOf(x, string(vocab.StatusDone), string(vocab.StatusRetry), string(vocab.StatusDecomposed), string(vocab.StatusBlocked), "agent_error", string(vocab.StatusTimeout), string(vocab.StatusInterrupted), string(vocab.StatusRunnerError), string(vocab.StatusPaused)) {
				bad = "not null or a status"
			}
		case "last_guard":
			if !oneOf(x, string(vocab.GuardPass), string(vocab.GuardFail), string(vocab.GuardSkipped)) {
				bad = "not null, pass, fail or skipped"
			}
		case "last_iter":
			if _, isNum := x.(float64); x != nil && (!isNum || !integerAtLeast1(x)) {
				bad = "not null or an integer >= 1"
			}
		case "last_summary", "last_node":
			if _, ok := x.(string); x != nil && !ok {
				bad = "not null or a string"
			}
		default:
			bad = "unknown property"
		}
		if bad != "" {
			return "/" + k + ": " + bad
		}
	}
	return ""
}

// integerAtLeast1 reports whether x is a number with no fraction, >= 1.
func integerAtLeast1(x any) bool {
	f, ok := x.(float64)
	return ok && f == math.Trunc(f) && f >= 1
}

// oneOf reports whether x is nil or one of the strings.
func oneOf(x any, values ...string) bool {
	if x == nil {
		return true
	}
	s, ok := x.(string)
	if !ok {
		return false
	}
	for _, v := range values {
		if s == v {
			return true
		}
	}
	return false
}
