package runrecord

import (
	"errors"
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
