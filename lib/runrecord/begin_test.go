package runrecord

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/layout"
)

// TestBegin: no record where .runner/runs/ is not ignored (and a warning
// says so); a new running record of the run, its runner, branch and goal
// title; the same runner re-attaches to it; once it is finished the next
// runner writes <run-id>.2; a record detached for another run is finished
// as interrupted when a runner starts this one.
func TestBegin(t *testing.T) {
	root, _ := repoFixture(t)
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	if id, err := Begin(root, os.Getpid(), warn); id != "" || err != nil || len(warned) != 1 || !strings.Contains(warned[0], "is not ignored by git") {
		t.Fatalf("unignored runs/: id %q, err %v, warned %q", id, err, warned)
	}
	put(t, root, layout.Gitignore, []byte("runs/\n"))
	put(t, root, layout.Goal, []byte("# The goal's title\n\nDo it.\n"))
	warned = nil
	id, err := Begin(root, os.Getpid(), warn)
	if err != nil || id != "run-g" || len(warned) != 0 {
		t.Fatalf("Begin = %q, %v (warned %q)", id, err, warned)
	}
	r, err := Load(filepath.Join(root, layout.RunRecord(id)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != Running || r.RunID != "run-g" || r.Runner.PID != os.Getpid() || r.Branch != "runner/run-g" || r.GoalTitle != "The goal's title" {
		t.Errorf("the new record: %+v", r)
	}
	if again, err := Begin(root, os.Getpid(), warn); again != "run-g" || err != nil {
		t.Errorf("the same runner again: %q, %v", again, err)
	}
	Finish(root, &r, Complete, "done", time.Now(), warn)
	if next, err := Begin(root, os.Getpid(), warn); next != "run-g.2" || err != nil {
		entries, _ := filepath.Glob(filepath.Join(root, layout.Runs, "*"))
		t.Errorf("after a finished record: %q, %v (warned %q, records %q)", next, err, warned, entries)
	}
	// A record another run left waiting for its next step (pid 0).
	other := Record{Version: 1, ID: "run-o", RunID: "run-o", Status: Running, Branch: "runner/run-o", StartedAt: time.Now(), UpdatedAt: time.Now(), Log: []Entry{}}
	if err := Save(filepath.Join(root, layout.RunRecord("run-o")), other); err != nil {
		t.Fatal(err)
	}
	if _, err := Begin(root, os.Getpid(), warn); err != nil {
		t.Fatal(err)
	}
	if o, err := Load(filepath.Join(root, layout.RunRecord("run-o"))); err != nil || o.Status != Interrupted {
		t.Errorf("the other run's detached record: %s, %v", o.Status, err)
	}
}
