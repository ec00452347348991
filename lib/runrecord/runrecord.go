// Package runrecord reads and writes run records, .runner/runs/<run-id>.json
// (seed 004 "run records", DESIGN.md decision 15), validated against the
// embedded run_record v1 schema on every read (written out in check.go).
//
// The current run's record is rewritten atomically at start, after every
// iteration and at the end; once a record is finished (any status but
// running) Save refuses to rewrite it. A record left running by a runner
// whose process is gone reads as interrupted through Effective.
package runrecord

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/vocab"
)

// The run statuses.
const (
	Running     = string(vocab.RunRunning)
	Complete    = string(vocab.RunComplete)
	Stuck       = string(vocab.RunStuck)
	Limit       = string(vocab.RunLimit)
	Timeout     = string(vocab.RunTimeout)
	Interrupted = string(vocab.RunInterrupted)
	Canceled    = string(vocab.RunCanceled)
	Error       = string(vocab.RunError)
	Paused      = string(vocab.RunPaused)  // running: the runner sleeps until Pause.Until; finished: the loop stopped on it (--no-pause)
	Waiting     = string(vocab.RunWaiting) // running: the runner waits for an answer (--wait); finished: the loop stopped on it
)

// MaxLog is the most log entries a record keeps; older ones are dropped.
const MaxLog = 200

// Record is one run record. Times are RFC 3339 in UTC.
type Record struct {
	Version       int        `json:"version"`
	ID            string     `json:"id"`
	RunID         string     `json:"run_id"`
	Branch        string     `json:"branch"`
	GoalTitle     string     `json:"goal_title"`
	Status        string     `json:"status"`
	Reason        string     `json:"reason"`
	StartedAt     time.Time  `json:"started_at"`
	FinishedAt    *time.Time `json:"finished_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
	Runner        Runner     `json:"runner"`
	Iterations    int        `json:"iterations"`
	Nodes         Nodes      `json:"nodes"`
	Usage         Usage      `json:"usage"`
	Budgets       Budgets    `json:"budgets"`
	LastIteration *LastIter  `json:"last_iteration"`
	Head          *string    `json:"head"`
	Log           []Entry    `json:"log"`
	// Pause is the session's pauses on usage limits and outages; nil
	// until the first.
	Pause *Pause `json:"pause,omitempty"`
	// StuckLeaves are the open leaves with no attempts left, in
	// selection order (every leaf stuck_policy skip passed over); absent
	// when none.
	StuckLeaves []StuckLeaf `json:"stuck_leaves,omitempty"`
}

// Pause is what a record says of the session's pauses: how many and how
// long in all, and the current one while the runner sleeps (Since and
// Until set, status paused). Cause is the last pause's (vocab.PauseCause);
// "" in a record written before it was kept.
type Pause struct {
	Count     int        `json:"count"`
	TotalSecs int64      `json:"total_secs"`
	Since     *time.Time `json:"since"`
	Until     *time.Time `json:"until"`
	Reason    string     `json:"reason"`
	Cause     string     `json:"cause,omitempty"`
}

// Runner names the process that owns a running record.
type Runner struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
}

// Nodes counts the tree's nodes: passed, open (not passed, attempts left)
// and stuck (open leaves with no attempts left).
type Nodes struct {
	Total  int `json:"total"`
	Passed int `json:"passed"`
	Open   int `json:"open"`
	Stuck  int `json:"stuck"`
}

// StuckLeaf is an open leaf with no attempts left.
type StuckLeaf struct {
	ID          string `json:"id"`
	Path        string `json:"path"`
	Title       string `json:"title"`
	Attempts    int    `json:"attempts"`
	MaxAttempts int    `json:"max_attempts"`
}

// Usage is the run's reported usage so far (the sum of its sessions).
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CachedTokens int64   `json:"cached_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Budgets are the run's limits; 0 is unlimited.
type Budgets struct {
	MaxIterations int     `json:"max_iterations"`
	MaxTokens     int64   `json:"max_tokens"`
	MaxCostUSD    float64 `json:"max_cost_usd"`
}

// LastIter summarises the last committed iteration.
type LastIter struct {
	Iter   int    `json:"iter"`
	NodeID string `json:"node_id"`
	Status string `json:"status"`
	Guard  string `json:"guard"`
	Result string `json:"result"`
}

// Entry is one line of the record's log: a hook that failed or hung, a
// cancel and who wrote it, a backend fallback.
type Entry struct {
	At      time.Time `json:"at"`
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
}

// ErrFinished is returned by Save for a record that is already finished.
var ErrFinished = errors.New("the run's record is finished and is never rewritten")

// Finished reports whether r is finished: it has a finish time, or a
// status only a finished record has. A record running, paused or waiting
// with no finish time still has its runner (or waits for its next step).
func Finished(r Record) bool {
	switch {
	case r.FinishedAt != nil:
		return true
	case r.Status == Running, r.Status == Paused, r.Status == Waiting:
		return false
	}
	return true
}

// AddLog appends an entry, dropping the oldest beyond MaxLog.
func (r *Record) AddLog(at time.Time, kind, message string) {
	r.Log = append(r.Log, Entry{At: at.UTC(), Kind: kind, Message: message})
	if n := len(r.Log) - MaxLog; n > 0 {
		r.Log = append([]Entry(nil), r.Log[n:]...)
	}
}

// Parse decodes and validates record bytes. check, the schema written
// out, judges the record; where the program links the full validator
// (lib/schema/full: runner-status, runner-ui) a record check refuses is
// worded by the schema, elsewhere by check's first problem. runner-record,
// which reads only the records it wrote, so pays no schema at start.
func Parse(data []byte) (Record, error) {
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return Record{}, err
	}
	if why := check(v); why != "" {
		if vs, _ := schema.Words(schema.RunRecord, v); len(vs) > 0 {
			p := vs[0].Pointer
			if p == "" {
				p = "/"
			}
			return Record{}, fmt.Errorf("%s: %s", p, vs[0].Message)
		}
		return Record{}, errors.New(why)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, err
	}
	if r.Log == nil {
		r.Log = []Entry{}
	}
	return r, nil
}

// Load reads and validates the record at path.
func Load(path string) (Record, error) {
	data, err := fsutil.ReadFile(path, "", 4<<20)
	if err != nil {
		return Record{}, err
	}
	r, err := Parse(data)
	if err != nil {
		return Record{}, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return r, nil
}

// Encode returns the record's bytes: keys in schema order, 2-space indent,
// trailing newline.
func Encode(r Record) []byte {
	if r.Log == nil {
		r.Log = []Entry{}
	}
	r.StartedAt = r.StartedAt.UTC()
	r.UpdatedAt = r.UpdatedAt.UTC()
	if p := r.Pause; p != nil {
		c := *p
		for _, t := range []**time.Time{&c.Since, &c.Until} {
			if *t != nil {
				u := (**t).UTC()
				*t = &u
			}
		}
		r.Pause = &c
	}
	if r.FinishedAt != nil {
		t := r.FinishedAt.UTC()
		r.FinishedAt = &t
	}
	data, _ := jsondoc.Marshal(r) // a Record always encodes
	return data
}

// Save writes r to path atomically, creating the directory. It refuses
// (ErrFinished) when the record already at path is finished.
func Save(path string, r Record) error {
	if old, err := Load(path); err == nil && Finished(old) {
		return fmt.Errorf("%s: %w", filepath.Base(path), ErrFinished)
	}
	if r.Version == 0 {
		r.Version = 1
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsutil.WriteAtomic(path, Encode(r), 0o644)
}

// Effective is r as a reader should see it: a record still running whose
// runner process is gone from this host reads as interrupted (the next
// step's recovery finalises it on disk).
func Effective(r Record) Record {
	if Finished(r) || !gone(r.Runner) {
		return r
	}
	r.Status = Interrupted
	r.Reason = fmt.Sprintf("the runner (pid %d) is gone", r.Runner.PID)
	return r
}

// Gone reports whether the runner process has ended. A record from another
// host cannot be checked and is taken as alive; pid 0 (no runner attached)
// is not gone.
func Gone(rn Runner) bool { return gone(rn) }

func gone(rn Runner) bool {
	host, err := os.Hostname()
	return err == nil && goneOn(rn, host, signal0)
}

// signal0 sends signal 0 to pid: nil or EPERM when the process exists
// (EPERM: it belongs to another user), ESRCH when it does not.
func signal0(pid int) error { return syscall.Kill(pid, 0) }

// goneOn is gone on the host named host, probe telling whether a pid
// exists (signal0): only ESRCH, no such process, means gone.
func goneOn(rn Runner, host string, probe func(pid int) error) bool {
	if host != rn.Host || rn.PID <= 0 {
		return false
	}
	return errors.Is(probe(rn.PID), syscall.ESRCH)
}

// List reads every record in dir (.runner/runs), oldest start first, each
// through Effective. A record that does not parse is returned in bad with
// its error rather than failing the listing.
func List(dir string) (recs []Record, bad []error, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		r, err := Load(filepath.Join(dir, name))
		if err != nil {
			bad = append(bad, err)
			continue
		}
		recs = append(recs, Effective(r))
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if !recs[i].StartedAt.Equal(recs[j].StartedAt) {
			return recs[i].StartedAt.Before(recs[j].StartedAt)
		}
		return recs[i].ID < recs[j].ID
	})
	return recs, bad, nil
}

// CurrentOf returns the id of the record of run runID that is still running
// in dir (.runner/runs), the newest when several are: the record a command
// inside a step adds its log entries to. ok is false when there is none.
func CurrentOf(dir, runID string) (id string, ok bool) {
	recs, _, err := List(dir)
	if err != nil {
		return "", false
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if r := recs[i]; r.RunID == runID && !Finished(r) {
			return r.ID, true
		}
	}
	return "", false
}
