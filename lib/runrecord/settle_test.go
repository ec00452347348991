package runrecord

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
)

// deadPID is the pid of a process of this host that has ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestBeginSettles: Begin finishes what earlier runners left before it
// writes its own record: a record of this run whose runner is gone is
// finished as interrupted, with the iteration committed since counted; a
// record another run left between steps too; a record running under
// another host's runner is left with a warning. Each is said. The new
// record takes the first free <run-id>.<n>.
func TestBeginSettles(t *testing.T) {
	root, _ := repoFixture(t)
	put(t, root, layout.Gitignore, []byte("runs/\n"))
	host, _ := os.Hostname()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dead := deadPID(t)
	for _, r := range []Record{
		{ID: "run-g", RunID: "run-g", Status: Complete, FinishedAt: &at},
		{ID: "run-g.2", RunID: "run-g", Status: Running, Runner: Runner{PID: dead, Host: host}},
		{ID: "run-o", RunID: "run-o", Status: Running},
		{ID: "run-x", RunID: "run-x", Status: Running, Runner: Runner{PID: 1, Host: "elsewhere"}},
	} {
		r.Version, r.Branch, r.StartedAt, r.UpdatedAt, r.Log = 1, "runner/"+r.RunID, at, at, []Entry{}
		if err := Save(filepath.Join(root, layout.RunRecord(r.ID)), r); err != nil {
			t.Fatal(err)
		}
	}
	var warned []string
	id, err := Begin(root, os.Getpid(), func(s string) { warned = append(warned, s) })
	if err != nil || id != "run-g.3" {
		t.Fatalf("Begin = %q, %v (warned %q)", id, err, warned)
	}
	interrupted := "the runner (pid " + strconv.Itoa(dead) + ") ended without finishing the run; recovered by the next runner"
	want := []string{
		"run record run-g.2 finalised as interrupted: " + interrupted,
		"run record run-o finalised as interrupted: a runner started run run-g while this run waited for its next step",
		"run record run-x is running under pid 1 on elsewhere; leaving it",
	}
	if !slices.Equal(warned, want) {
		t.Errorf("warned:\n%s\nwant:\n%s", strings.Join(warned, "\n"), strings.Join(want, "\n"))
	}
	g2, err := Load(filepath.Join(root, layout.RunRecord("run-g.2")))
	if err != nil || g2.Status != Interrupted || g2.Reason != interrupted || g2.FinishedAt == nil || g2.Iterations != 1 ||
		g2.LastIteration == nil || g2.LastIteration.Iter != 2 {
		t.Errorf("run-g.2: %+v, %v", g2, err)
	}
	if x, err := Load(filepath.Join(root, layout.RunRecord("run-x"))); err != nil || x.Status != Running || x.FinishedAt != nil {
		t.Errorf("run-x: %+v, %v", x, err)
	}
	if g3, err := Load(filepath.Join(root, layout.RunRecord("run-g.3"))); err != nil || g3.Status != Running || g3.Runner.PID != os.Getpid() {
		t.Errorf("run-g.3: %+v, %v", g3, err)
	}
}

// TestNow: the records' clock is RUNNER_RECORD_NOW's when it is a time,
// in UTC, else the clock's.
func TestNow(t *testing.T) {
	t.Setenv(NowEnv, "2026-01-02T05:04:05+02:00")
	if got := Now(); !got.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || got.Location() != time.UTC {
		t.Errorf("Now = %v", got)
	}
	t.Setenv(NowEnv, "yesterday")
	before := time.Now()
	if got := Now(); got.Before(before.Add(-time.Second)) || got.Location() != time.UTC {
		t.Errorf("Now with a bad %s = %v", NowEnv, got)
	}
}

// TestUpdate: runner-record update refreshes the live record after a
// committed iteration and, detached, leaves it with no runner; a finished
// record, a missing one and an unreadable repository are errors that
// write nothing.
func TestUpdate(t *testing.T) {
	root, _ := repoFixture(t)
	put(t, root, layout.Gitignore, []byte("runs/\n"))
	t.Setenv(NowEnv, "2026-01-02T03:04:05Z")
	id, err := Begin(root, os.Getpid(), func(s string) { t.Errorf("warned %q", s) })
	if err != nil || id != "run-g" {
		t.Fatalf("Begin = %q, %v", id, err)
	}
	h := Hooks{Root: root, Stop: stopNever{context.Background()}, Warnf: t.Errorf}
	if err := Update(root, id, h, true); err != nil {
		t.Fatal(err)
	}
	// The iteration the record began after is not counted again.
	r, err := Load(filepath.Join(root, layout.RunRecord(id)))
	if err != nil || r.Status != Running || r.Runner != (Runner{}) || r.Iterations != 0 || r.LastIteration == nil || r.LastIteration.Iter != 2 {
		t.Fatalf("after Update: %+v, %v", r, err)
	}
	// Iteration 3 committed: counted, the record stamped with its time.
	var m iterdir.Meta
	if err := iterdir.Read(filepath.Join(root, layout.IterDir("run-g", 2)), iterdir.MetaFile, &m); err != nil {
		t.Fatal(err)
	}
	m.Iteration = 3
	if err := os.MkdirAll(filepath.Join(root, layout.IterDir("run-g", 3)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := iterdir.Write(filepath.Join(root, layout.IterDir("run-g", 3)), iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
	rs, err := runstate.Load(filepath.Join(root, layout.RunState))
	if err != nil {
		t.Fatal(err)
	}
	rs.NextIter = 4
	put(t, root, layout.RunState, runstate.Encode(rs))
	t.Setenv(NowEnv, "2026-01-02T04:00:00Z")
	if err := Update(root, id, h, false); err != nil {
		t.Fatal(err)
	}
	if r, err = Load(filepath.Join(root, layout.RunRecord(id))); err != nil || r.Iterations != 1 || r.LastIteration == nil || r.LastIteration.Iter != 3 ||
		!r.UpdatedAt.Equal(time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC)) {
		t.Fatalf("after iteration 3: %+v, %v", r, err)
	}
	if err := Update(root, "nosuch", h, false); err == nil || !strings.HasPrefix(err.Error(), "read the run record: ") {
		t.Errorf("a missing record: %v", err)
	}
	if err := os.Remove(filepath.Join(root, layout.Tree)); err != nil {
		t.Fatal(err)
	}
	if err := Update(root, id, h, false); err == nil || !strings.Contains(err.Error(), "tree.json") {
		t.Errorf("no tree: %v", err)
	}
	Finish(root, &r, Complete, "done", time.Now(), func(string) {})
	data, _ := os.ReadFile(filepath.Join(root, layout.RunRecord(id)))
	if _, _, err := OpenLive(root, id); err == nil || err.Error() != "run record run-g is finished (complete) and is never rewritten" {
		t.Errorf("a finished record: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(root, layout.RunRecord(id))); string(after) != string(data) {
		t.Error("a finished record was rewritten")
	}
}
