package iterdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/layout"
)

// TestLast: the last iteration is running only once begun (begin.json)
// and until finished (meta.json); its phase follows the files the step
// has written; an earlier unfinished iteration does not count, and a
// begin.json that cannot be read is an error.
func TestLast(t *testing.T) {
	run := t.TempDir()
	if r, err := Last(run); r != nil || err != nil {
		t.Fatalf("no iterations: %+v %v", r, err)
	}
	if r, err := Last(filepath.Join(run, "missing")); r != nil || err != nil {
		t.Fatalf("no run directory: %+v %v", r, err)
	}
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	begin := func(n int) string {
		t.Helper()
		dir := filepath.Join(run, layout.IterName(n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		b := Begin{Version: 1, RunID: "r", Iteration: n, NodeID: "a.b", NodePath: "a/a.b", Mode: "decompose", Attempts: 2, MaxAttempts: 4, StartedAt: since}
		if err := Write(dir, BeginFile, b); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	touch := func(dir, name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	touch(begin(1), MetaFile)
	if r, err := Last(run); r != nil || err != nil {
		t.Fatalf("finished: %+v %v", r, err)
	}
	// Iteration 2 left unfinished, 3 allocated: 3 is the last, not begun.
	begin(2)
	if err := os.MkdirAll(filepath.Join(run, layout.IterName(3)), 0o755); err != nil {
		t.Fatal(err)
	}
	if r, err := Last(run); r != nil || err != nil {
		t.Fatalf("allocated, not begun: %+v %v", r, err)
	}
	dir := begin(3)
	r, err := Last(run)
	if err != nil {
		t.Fatal(err)
	}
	want := Running{Iteration: 3, NodeID: "a.b", NodePath: "a/a.b", Mode: "decompose", Attempt: 3, MaxAttempts: 4, Since: since.UTC(), Phase: PhaseAgent}
	if r == nil || *r != want || r.Since.Location() != time.UTC {
		t.Fatalf("begun: %+v, want %+v", r, want)
	}
	for _, c := range []struct{ file, phase string }{{AgentFile, PhaseRecord}, {GuardLog, PhaseGuard}, {GuardFile, PhaseRecord}} {
		touch(dir, c.file)
		if r, err := Last(run); err != nil || r == nil || r.Phase != c.phase {
			t.Fatalf("with %s: %+v %v, want phase %s", c.file, r, err, c.phase)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, BeginFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := Last(run); err == nil || r != nil || !strings.Contains(err.Error(), BeginFile) {
		t.Fatalf("a broken begin.json: %+v %v", r, err)
	}
	touch(dir, MetaFile)
	if r, err := Last(run); r != nil || err != nil {
		t.Fatalf("finished at last: %+v %v", r, err)
	}
}
