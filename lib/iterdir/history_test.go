package iterdir

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/layout"
)

func mkdirs(t *testing.T, root string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(root, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIters: the iteration directories, ascending by number; directories
// set aside by a recovery, files, short or signed names and iteration 0
// are not iterations.
func TestIters(t *testing.T) {
	run := t.TempDir()
	mkdirs(t, run, "0010", "0002", "0001", "9001", "0003.aborted", "0003.aborted-2", "0000", "+004", "-005", "007", "abcd")
	if err := os.WriteFile(filepath.Join(run, "0005"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Iters(run)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 10, 9001}; !slices.Equal(got, want) {
		t.Fatalf("Iters = %v, want %v", got, want)
	}
	if got, err := Iters(filepath.Join(run, "missing")); got != nil || err != nil {
		t.Fatalf("Iters of a missing run: %v %v", got, err)
	}
	if _, err := Iters(filepath.Join(run, "0005")); err == nil {
		t.Fatal("Iters of a file: no error")
	}
}

// TestHistory: the last n iterations that have a meta.json, oldest
// first; n <= 0 gives all; an unreadable meta.json is an error.
func TestHistory(t *testing.T) {
	run := t.TempDir()
	for _, it := range []int{1, 2, 4, 10} {
		dir := filepath.Join(run, layout.IterName(it))
		mkdirs(t, run, layout.IterName(it))
		if err := Write(dir, MetaFile, Meta{Version: 1, Iteration: it, NodeID: "n" + layout.IterName(it)}); err != nil {
			t.Fatal(err)
		}
	}
	mkdirs(t, run, "0003") // still running: no meta.json
	for n, want := range map[int][]int{0: {1, 2, 4, 10}, -1: {1, 2, 4, 10}, 1: {10}, 2: {4, 10}, 3: {2, 4, 10}, 4: {1, 2, 4, 10}, 9: {1, 2, 4, 10}} {
		rows, err := History(run, n)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, r := range rows {
			got = append(got, r.Iter)
			if r.NodeID != "n"+layout.IterName(r.Iter) {
				t.Errorf("row %d is node %s", r.Iter, r.NodeID)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("History(%d) = %v, want %v", n, got, want)
		}
	}
	if rows, err := History(filepath.Join(run, "missing"), 0); rows != nil || err != nil {
		t.Errorf("History of a missing run: %v %v", rows, err)
	}
	if err := os.WriteFile(filepath.Join(run, "0004", MetaFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := History(run, 1); err != nil {
		t.Errorf("History(1) read past the last row to a broken meta.json: %v", err)
	}
	if _, err := History(run, 0); err == nil || !strings.Contains(err.Error(), MetaFile) {
		t.Errorf("History over a broken meta.json: %v", err)
	}
}

// TestRowOf: every field of a history row from its meta.json; tokens are
// input plus output (not cached), the start in UTC.
func TestRowOf(t *testing.T) {
	zone := time.FixedZone("X", 5*3600+30*60)
	m := Meta{
		Iteration: 7, NodeID: "a.b", NodePath: "root/a.b", Mode: "execute", Status: "done", Result: "passed",
		Guard: "pass", AgentError: true, DurationMS: 1234, Summary: "did it", Commit: "abc",
		StartedAt: time.Date(2026, 3, 4, 1, 2, 3, 999, zone),
		Agent:     &Agent{Class: "ok", Usage: Usage{InputTokens: 1000, OutputTokens: 23, CachedTokens: 400, CostUSD: 0.125}},
	}
	want := Row{
		Iter: 7, NodeID: "a.b", NodePath: "root/a.b", Mode: "execute", Status: "done", Result: "passed",
		Guard: "pass", AgentError: true, Class: "ok", StartedAt: "2026-03-03T19:32:03Z", DurationMS: 1234,
		Tokens: 1023, CostUSD: 0.125, Summary: "did it", Commit: "abc",
	}
	if got := RowOf(m); got != want {
		t.Fatalf("RowOf:\n got %+v\nwant %+v", got, want)
	}
	m.Agent = nil
	want.Class, want.Tokens, want.CostUSD = "", 0, 0
	if got := RowOf(m); got != want {
		t.Fatalf("RowOf without an agent:\n got %+v\nwant %+v", got, want)
	}
}

func TestShortDuration(t *testing.T) {
	for ms, want := range map[int64]string{
		0: "0ms", 999: "999ms", 1000: "1.0s", 1049: "1.0s", 1050: "1.1s", 12345: "12.3s", 59_949: "59.9s",
		60_000: "1m0s", 61_999: "1m1s", 184_000: "3m4s", 3_723_000: "62m3s",
	} {
		if got := ShortDuration(ms); got != want {
			t.Errorf("ShortDuration(%d) = %q, want %q", ms, got, want)
		}
	}
}

// TestFiles: Write and Read round-trip a record; Exists and LoadBegin
// tell a missing file from a broken one.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	if Exists(dir, BeginFile) {
		t.Fatal("Exists before the write")
	}
	if _, err := LoadBegin(dir); err == nil || !strings.Contains(err.Error(), "pass the directory printed by iter-log begin") {
		t.Fatalf("LoadBegin of a missing begin.json: %v", err)
	}
	b := Begin{Version: 1, RunID: "r", Iteration: 3, NodeID: "n", Mode: "execute", Attempts: 1, MaxAttempts: 3}
	if err := Write(dir, BeginFile, b); err != nil {
		t.Fatal(err)
	}
	if !Exists(dir, BeginFile) {
		t.Fatal("Exists after the write")
	}
	got, err := LoadBegin(dir)
	if err != nil || got != b {
		t.Fatalf("LoadBegin = %+v, %v", got, err)
	}
	if err := os.WriteFile(filepath.Join(dir, BeginFile), []byte(`{"version":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBegin(dir); err == nil || errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), BeginFile+": ") {
		t.Fatalf("LoadBegin of a broken begin.json: %v", err)
	}
	if err := Write(dir, "x.json", make(chan int)); err == nil {
		t.Fatal("Write of a value JSON cannot hold: no error")
	}
	called := false
	firstErr, err := WriteAfter(dir, "y.json", make(chan int), func() error { called = true; return nil })
	if err == nil || firstErr != nil || called || Exists(dir, "y.json") {
		t.Fatalf("WriteAfter of a value JSON cannot hold: %v %v, first called %v", firstErr, err, called)
	}
	firstErr, err = WriteAfter(dir, "y.json", Update{Version: 1, Result: "passed"}, func() error { called = true; return nil })
	var u Update
	if firstErr != nil || err != nil || !called || Read(dir, "y.json", &u) != nil || u.Result != "passed" {
		t.Fatalf("WriteAfter: %v %v, first called %v, read %+v", firstErr, err, called, u)
	}
}
