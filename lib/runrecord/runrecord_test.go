package runrecord

import (
	"errors"
	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
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

// TestParseCanonicalAgreesWithSchema: for records in the form Encode
// writes, the fast path's verdict is the schema's, constraint by
// constraint; for any other bytes it never accepts what the schema
// refuses.
func TestParseCanonicalAgreesWithSchema(t *testing.T) {
	finished := time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)
	cases := map[string]func(r *Record){
		"sample":           func(r *Record) {},
		"finished":         func(r *Record) { r.Status, r.FinishedAt = Complete, &finished },
		"no head":          func(r *Record) { r.Head = nil },
		"last iteration":   func(r *Record) { r.LastIteration = &LastIter{Iter: 1, NodeID: "a", Status: "done"} },
		"log":              func(r *Record) { r.AddLog(finished, "hook_failed", "on_iteration: \"quoted\" <html> é \u2028") },
		"version 2":        func(r *Record) { r.Version = 2 },
		"bad id":           func(r *Record) { r.ID = "-r1" },
		"long id":          func(r *Record) { r.ID = strings.Repeat("a", 129) },
		"bad run id":       func(r *Record) { r.RunID = "r 1" },
		"empty branch":     func(r *Record) { r.Branch = "" },
		"status":           func(r *Record) { r.Status = "done" },
		"pid":              func(r *Record) { r.Runner.PID = -1 },
		"iterations":       func(r *Record) { r.Iterations = -1 },
		"nodes":            func(r *Record) { r.Nodes.Stuck = -1 },
		"tokens":           func(r *Record) { r.Usage.CachedTokens = -1 },
		"cost":             func(r *Record) { r.Usage.CostUSD = -0.5 },
		"budget":           func(r *Record) { r.Budgets.MaxCostUSD = -1 },
		"iter 0":           func(r *Record) { r.LastIteration = &LastIter{} },
		"short head":       func(r *Record) { h := strings.Repeat("a", 39); r.Head = &h },
		"long head":        func(r *Record) { h := strings.Repeat("a", 65); r.Head = &h },
		"upper head":       func(r *Record) { h := strings.Repeat("A", 40); r.Head = &h },
		"sha256 head":      func(r *Record) { h := strings.Repeat("0", 64); r.Head = &h },
		"bad kind":         func(r *Record) { r.Log = []Entry{{At: finished, Kind: "Hook"}} },
		"empty kind":       func(r *Record) { r.Log = []Entry{{At: finished, Kind: ""}} },
		"too many entries": func(r *Record) { r.Log = make([]Entry, MaxLog+1); fillKinds(r) },
		"most entries":     func(r *Record) { r.Log = make([]Entry, MaxLog); fillKinds(r) },
	}
	for name, mutate := range cases {
		r := sample()
		r.Version = 1
		mutate(&r)
		data := Encode(r)
		_, fast := parseCanonical(data)
		v, err := jsonstrict.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		valid := len(schema.Validate(schema.RunRecord, v)) == 0
		if fast != valid {
			t.Errorf("%s: fast path %v, schema %v", name, fast, valid)
		}
		if _, err := Parse(data); (err == nil) != valid {
			t.Errorf("%s: Parse: %v, schema valid %v", name, err, valid)
		}
	}
	// Valid documents in another form: the full path decides.
	data := string(Encode(withVersion(sample())))
	for name, other := range map[string]string{
		"compact":       strings.Join(strings.Fields(data), ""),
		"escaped":       strings.Replace(data, `"goal_title": "Goal"`, `"goal_title": "G\u006fal"`, 1),
		"reordered":     strings.Replace(data, `"version": 1,`+"\n  "+`"id": "r1",`, `"id": "r1",`+"\n  "+`"version": 1,`, 1),
		"no trailer":    strings.TrimSuffix(data, "\n"),
		"duplicate key": strings.Replace(data, `"version": 1,`, `"version": 1, "version": 1,`, 1),
		"upper key":     strings.Replace(data, `"version": 1,`, `"Version": 1,`, 1),
		"null log":      strings.Replace(data, `"log": []`, `"log": null`, 1),
	} {
		if other == data {
			t.Fatalf("%s: no change", name)
		}
		if _, fast := parseCanonical([]byte(other)); fast {
			t.Errorf("%s: taken by the fast path", name)
		}
		_, err := Parse([]byte(other))
		v, derr := jsonstrict.Decode([]byte(other))
		valid := derr == nil && len(schema.Validate(schema.RunRecord, v)) == 0
		if (err == nil) != valid {
			t.Errorf("%s: Parse: %v, schema valid %v", name, err, valid)
		}
	}
}

func fillKinds(r *Record) {
	for i := range r.Log {
		r.Log[i] = Entry{At: r.StartedAt, Kind: "k", Message: "m"}
	}
}
