package iterdir

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
)

// TestRecover: each state a step can be killed in gives its action, for
// run_state.json's next_iter as the runner leaves it (bumped by iter-log
// end, so one behind or at the last iteration); an iteration stopped
// before begin.json is set aside, never reused.
func TestRecover(t *testing.T) {
	cases := []struct {
		name  string
		files []string // in the last iteration's directory (iteration 3)
		bump  bool     // iter-log end wrote run_state.json (next_iter 4)
		want  Recovery
	}{
		{"committed", []string{BeginFile, "meta:commit"}, true, Recovery{Action: RecoverNone}},
		{"meta without commit", []string{BeginFile, "meta"}, true, Recovery{Action: RecoverCommit, Dir: "R/0003", Selected: "m"}},
		{"tree updated", []string{BeginFile, UpdateFile}, false, Recovery{Action: RecoverEnd, Dir: "R/0003", Selected: "b"}},
		{"agent ran", []string{BeginFile, AgentFile}, false, Recovery{Action: RecoverUpdate, Dir: "R/0003", Selected: "b"}},
		{"allocated only", nil, false, Recovery{Action: RecoverDiscarded, Dir: "R/0003.aborted"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			runDir := filepath.Join(root, layout.Iterations, "run-1")
			for k := 1; k <= 3; k++ {
				if err := os.MkdirAll(filepath.Join(runDir, layout.IterName(k)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for k := 1; k <= 2; k++ {
				if err := Write(filepath.Join(runDir, layout.IterName(k)), MetaFile, Meta{Iteration: k, NodeID: "old", Commit: "c"}); err != nil {
					t.Fatal(err)
				}
			}
			dir := filepath.Join(runDir, layout.IterName(3))
			for _, f := range c.files {
				var err error
				switch f {
				case BeginFile:
					err = Write(dir, f, Begin{Version: 1, RunID: "run-1", Iteration: 3, NodeID: "b"})
				case "meta", "meta:commit":
					m := Meta{Iteration: 3, NodeID: "m"}
					if f == "meta:commit" {
						m.Commit = "c"
					}
					err = Write(dir, MetaFile, m)
				default:
					err = os.WriteFile(filepath.Join(dir, f), []byte("{}\n"), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			rs := runstate.New("run-1")
			rs.NextIter = 3
			if c.bump {
				rs.NextIter = 4
			}
			if err := os.MkdirAll(filepath.Join(root, filepath.Dir(layout.RunState)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := runstate.Save(filepath.Join(root, layout.RunState), rs); err != nil {
				t.Fatal(err)
			}
			got, err := Recover(root)
			if err != nil {
				t.Fatal(err)
			}
			if c.want.Dir != "" { // R: the run's directory
				c.want.Dir = filepath.ToSlash(filepath.Join(layout.Iterations, "run-1")) + c.want.Dir[1:]
			}
			if got != c.want {
				t.Fatalf("Recover = %+v, want %+v", got, c.want)
			}
			if c.want.Action == RecoverDiscarded {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Fatalf("the unstarted directory is still there: %v", err)
				}
			}
		})
	}
}

// TestRecoverAsideTaken: an iteration set aside again goes to the first
// free .aborted-<k>, k from 2 up.
func TestRecoverAsideTaken(t *testing.T) {
	root := t.TempDir()
	runDir := filepath.Join(root, layout.Iterations, "run-1")
	for _, name := range []string{"0001", "0001.aborted", "0001.aborted-2"} {
		if err := os.MkdirAll(filepath.Join(runDir, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, filepath.Dir(layout.RunState)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := runstate.Save(filepath.Join(root, layout.RunState), runstate.New("run-1")); err != nil {
		t.Fatal(err)
	}
	got, err := Recover(root)
	want := Recovery{Action: RecoverDiscarded, Dir: layout.Iterations + "/run-1/0001.aborted-3"}
	if err != nil || got != want {
		t.Fatalf("Recover = %+v %v, want %+v", got, err, want)
	}
	if _, err := os.Stat(filepath.Join(runDir, "0001.aborted-3")); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryString: the line iter-log recover prints, the directory and
// the node only when there are.
func TestRecoveryString(t *testing.T) {
	for r, want := range map[Recovery]string{
		{Action: RecoverNone}:                                   "action=none",
		{Action: RecoverDiscarded, Dir: "d/0001.aborted"}:       "action=discarded dir=d/0001.aborted",
		{Action: RecoverUpdate, Dir: "d/0002", Selected: "n.1"}: "action=update dir=d/0002 selected=n.1",
		{Action: RecoverEnd, Selected: "n.1", Warning: "w"}:     "action=end selected=n.1",
	} {
		if got := r.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", r, got, want)
		}
	}
}

// TestIterNumber: four digits or more, every one a digit, a number above
// zero.
func TestIterNumber(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"0003", 3, true}, {"0012", 12, true}, {"9999", 9999, true}, {"0908", 908, true}, {"12345", 12345, true},
		{"100000000", 100000000, true}, {"0000", 0, false}, {"003", 0, false}, {"", 0, false}, {"00a1", 0, false},
		{"0/01", 0, false}, {"0:01", 0, false}, {"99999999999", 0, false}, {"0003.aborted", 0, false},
	} {
		if n, ok := iterNumber(c.name); n != c.n || ok != c.ok {
			t.Errorf("iterNumber(%q) = %d %v, want %d %v", c.name, n, ok, c.n, c.ok)
		}
	}
}
