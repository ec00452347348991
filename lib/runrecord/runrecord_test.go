package runrecord

import (
	"errors"
	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sample() Record {
	host, _ := os.Hostname()
	head := strings.Repeat("a", 40)
	return Record{
		ID: "r1", RunID: "r1", Branch: "runner/r1", GoalTitle: "Goal", Status: Running,
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		UpdatedAt: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Runner:    Runner{PID: os.Getpid(), Host: host},
		Nodes:     Nodes{Total: 3, Passed: 1, Open: 2},
		Budgets:   Budgets{MaxIterations: 10},
		Head:      &head,
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "runs", "r1.json")
	r := sample()
	r.AddLog(time.Unix(0, 0), "hook_failed", "on_iteration: exit 1")
	if err := Save(p, r); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "r1" || got.Version != 1 || len(got.Log) != 1 || got.Log[0].Kind != "hook_failed" || *got.Head != *r.Head {
		t.Fatalf("round trip: %+v", got)
	}
}

func TestSaveRefusesFinished(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r1.json")
	r := sample()
	r.Status = Complete
	now := time.Now()
	r.FinishedAt = &now
	if err := Save(p, r); err != nil {
		t.Fatal(err)
	}
	r.Reason = "again"
	if err := Save(p, r); !errors.Is(err, ErrFinished) {
		t.Fatalf("second save of a finished record: %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	for name, mutate := range map[string]func(string) string{
		"status":  func(s string) string { return strings.Replace(s, `"running"`, `"done"`, 1) },
		"unknown": func(s string) string { return strings.Replace(s, `"version": 1,`, `"version": 1, "x": 1,`, 1) },
		"head":    func(s string) string { return strings.Replace(s, strings.Repeat("a", 40), "HEAD", 1) },
	} {
		if _, err := Parse([]byte(mutate(string(Encode(sample()))))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Parse(Encode(withVersion(sample()))); err != nil {
		t.Fatalf("valid record refused: %v", err)
	}
}

func withVersion(r Record) Record { r.Version = 1; return r }

func TestEffectiveDeadRunner(t *testing.T) {
	r := sample()
	if Effective(r).Status != Running {
		t.Fatal("a live runner read as gone")
	}
	r.Runner.PID = 1 << 22 // above the default pid_max: no such process
	if e := Effective(r); e.Status != Interrupted || !strings.Contains(e.Reason, "gone") {
		t.Fatalf("dead runner: %+v", e)
	}
	r.Runner.Host = "elsewhere"
	if Effective(r).Status != Running {
		t.Fatal("a record from another host was judged")
	}
}

func TestListSortsAndReportsBad(t *testing.T) {
	dir := t.TempDir()
	a, b := sample(), sample()
	a.ID, b.ID = "b", "a"
	b.StartedAt = a.StartedAt.Add(time.Hour)
	for _, r := range []Record{a, b} {
		if err := Save(filepath.Join(dir, r.ID+".json"), r); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644)
	recs, bad, err := List(dir)
	if err != nil || len(recs) != 2 || recs[0].ID != "b" || len(bad) != 1 {
		t.Fatalf("list: %v %v %v", recs, bad, err)
	}
}

// TestCheckAgreesWithSchema: check, the schema written out, accepts what
// the full validator accepts and nothing else, for records Encode writes
// with every value constraint broken one at a time, and for documents in
// other forms (missing, unknown, mistyped properties).
func TestCheckAgreesWithSchema(t *testing.T) {
	finished := time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)
	docs := map[string]string{}
	for name, mutate := range map[string]func(r *Record){
		"sample":           func(r *Record) {},
		"finished":         func(r *Record) { r.Status, r.FinishedAt = Complete, &finished },
		"no head":          func(r *Record) { r.Head = nil },
		"last iteration":   func(r *Record) { r.LastIteration = &LastIter{Iter: 1, NodeID: "a", Status: "done"} },
		"log":              func(r *Record) { r.AddLog(finished, "hook_failed", "on_iteration: \"quoted\" <html> é \u2028") },
		"version 2":        func(r *Record) { r.Version = 2 },
		"bad id":           func(r *Record) { r.ID = "-r1" },
		"long id":          func(r *Record) { r.ID = strings.Repeat("a", 129) },
		"longest id":       func(r *Record) { r.ID = strings.Repeat("a", 128) },
		"bad run id":       func(r *Record) { r.RunID = "r 1" },
		"empty branch":     func(r *Record) { r.Branch = "" },
		"status":           func(r *Record) { r.Status = "done" },
		"pid":              func(r *Record) { r.Runner.PID = -1 },
		"iterations":       func(r *Record) { r.Iterations = -1 },
		"nodes":            func(r *Record) { r.Nodes.Stuck = -1 },
		"tokens":           func(r *Record) { r.Usage.CachedTokens = -1 },
		"cost":             func(r *Record) { r.Usage.CostUSD = -0.5 },
		"budget":           func(r *Record) { r.Budgets.MaxCostUSD = -1 },
		"budget tokens":    func(r *Record) { r.Budgets.MaxTokens = -1 },
		"iter 0":           func(r *Record) { r.LastIteration = &LastIter{} },
		"short head":       func(r *Record) { h := strings.Repeat("a", 39); r.Head = &h },
		"long head":        func(r *Record) { h := strings.Repeat("a", 65); r.Head = &h },
		"upper head":       func(r *Record) { h := strings.Repeat("A", 40); r.Head = &h },
		"sha256 head":      func(r *Record) { h := strings.Repeat("0", 64); r.Head = &h },
		"bad kind":         func(r *Record) { r.Log = []Entry{{At: finished, Kind: "Hook"}} },
		"empty kind":       func(r *Record) { r.Log = []Entry{{At: finished, Kind: ""}} },
		"too many entries": func(r *Record) { r.Log = make([]Entry, MaxLog+1); fillKinds(r) },
		"most entries":     func(r *Record) { r.Log = make([]Entry, MaxLog); fillKinds(r) },
		"stuck leaves": func(r *Record) {
			r.StuckLeaves = []StuckLeaf{{ID: "a", Path: "r/a", Title: "A", Attempts: 3, MaxAttempts: 3}}
		},
		"bad stuck leaf": func(r *Record) {
			r.StuckLeaves = []StuckLeaf{{ID: "a", Path: "r/a", Title: "A", Attempts: 3, MaxAttempts: 3}, {ID: "b", Attempts: -1}}
		},
		"pause": func(r *Record) {
			r.Pause = &Pause{Count: 2, TotalSecs: 90, Since: &finished, Until: &finished, Reason: "limit", Cause: "outage"}
		},
		"pause ended": func(r *Record) { r.Pause = &Pause{Count: 1, TotalSecs: 5, Reason: "limit"} },
		"pause cause": func(r *Record) { r.Pause = &Pause{Count: 1, Reason: "limit", Cause: "weather"} },
		"pause count": func(r *Record) { r.Pause = &Pause{Count: -1, Since: &finished, Reason: "limit"} },
	} {
		r := sample()
		r.Version = 1
		mutate(&r)
		docs[name] = string(Encode(r))
	}
	data := docs["log"]
	for name, other := range map[string]string{
		"compact":         strings.Join(strings.Fields(data), ""),
		"escaped":         strings.Replace(data, `"goal_title": "Goal"`, `"goal_title": "G\u006fal"`, 1),
		"float count":     strings.Replace(data, `"iterations": 0,`, `"iterations": 0.0,`, 1),
		"fraction count":  strings.Replace(data, `"iterations": 0,`, `"iterations": 0.5,`, 1),
		"string count":    strings.Replace(data, `"iterations": 0,`, `"iterations": "0",`, 1),
		"missing":         strings.Replace(data, `"reason": "",`, ``, 1),
		"unknown":         strings.Replace(data, `"version": 1,`, `"version": 1, "x": 1,`, 1),
		"nested unknown":  strings.Replace(data, `"host":`, `"x": 1, "host":`, 1),
		"nested missing":  strings.Replace(data, `"stuck": 0`, `"x": 0`, 1),
		"null runner":     strings.Replace(data, `"runner": {`, `"runner": null, "x": {`, 1),
		"number time":     strings.Replace(data, `"finished_at": null`, `"finished_at": 5`, 1),
		"string version":  strings.Replace(data, `"version": 1,`, `"version": "1",`, 1),
		"bool version":    strings.Replace(data, `"version": 1,`, `"version": true,`, 1),
		"null log":        strings.Replace(data, `"log": [`, `"log": null, "x": [`, 1),
		"entry not obj":   strings.Replace(data, `"log": [`, `"log": [1,`, 1),
		"entry unknown":   strings.Replace(data, `"kind": "hook_failed"`, `"kind": "hook_failed", "x": 1`, 1),
		"array":           `[` + data + `]`,
		"null head":       strings.Replace(data, `"head": "`, `"head": null, "x": "`, 1),
		"object last":     strings.Replace(data, `"last_iteration": null`, `"last_iteration": {}`, 1),
		"integer cost":    strings.Replace(data, `"cost_usd": 0`, `"cost_usd": 7`, 1),
		"negative budget": strings.Replace(data, `"max_cost_usd": 0`, `"max_cost_usd": -0.001`, 1),
	} {
		if other == data {
			t.Fatalf("%s: no change", name)
		}
		docs[name] = other
	}
	for name, doc := range docs {
		v, err := jsonstrict.Decode([]byte(doc))
		if err != nil {
			// A duplicate key, say: jsonstrict refuses it before any schema.
			t.Fatalf("%s: %v", name, err)
		}
		valid := len(full.Validate(schema.RunRecord, v)) == 0
		if why := check(v); (why == "") != valid {
			t.Errorf("%s: check says %q, schema valid %v", name, why, valid)
		}
	}
}

// TestParseWithoutFullValidator: a program that does not link the full
// validator (runner-record) refuses an invalid record with check's first
// problem.
func TestParseWithoutFullValidator(t *testing.T) {
	prev := schema.SetValidator(nil)
	defer schema.SetValidator(prev)
	data := strings.Replace(string(Encode(withVersion(sample()))), `"running"`, `"done"`, 1)
	if _, err := Parse([]byte(data)); err == nil || err.Error() != "/status: not a run status" {
		t.Fatalf("Parse: %v", err)
	}
	if _, err := Parse(Encode(withVersion(sample()))); err != nil {
		t.Fatalf("valid record: %v", err)
	}
}

func fillKinds(r *Record) {
	for i := range r.Log {
		r.Log[i] = Entry{At: r.StartedAt, Kind: "k", Message: "m"}
	}
}
