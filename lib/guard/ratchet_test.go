package guard

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/testresults"
)

// TestRunRatchet: after a green guard, the ratchet holds only when its
// count is not below the run's best and every test that passed at the best
// passes again by name; a count below, a ratchet that fails or prints no
// count, and a failing or errored test the output reports each fail the
// guard, with the reason.
func TestRunRatchet(t *testing.T) {
	in := cli.NotifyInterrupt()
	defer in.Stop()
	env := &cli.Env{Dir: t.TempDir(), Stdout: io.Discard, Stderr: io.Discard}
	logPath := filepath.Join(env.Dir, "guard.log")
	pass := `{"Action":"pass","Package":"ex","Test":"TestA"}` + "\n"
	for _, c := range []struct {
		name    string
		script  string
		best    Best
		output  string
		outcome string
		says    string
		noCount bool // the ratchet gave no count
	}{
		{"below the best", "echo 5", Best{Found: true, Count: 6, Commit: "abc"}, pass, Fail, "only 5 tests passed, fewer than the 6", false},
		{"at the best", "echo 6", Best{Found: true, Count: 6}, pass, Pass, "", false},
		{"above the best", "echo 7", Best{Found: true, Count: 6}, pass, Pass, "", false},
		{"no best yet", "echo 0", Best{}, pass, Pass, "", false},
		{"ratchet fails", "echo 9; echo broken >&2; exit 3", Best{}, pass, Fail, "failed (exit 3)", true},
		{"no count", "echo many", Best{}, pass, Fail, "gave no count", true},
		{"a test of the best missing", "echo 6", Best{Found: true, Count: 6, Names: []string{"ex.TestA", "ex.TestB"}}, pass, Fail, "did not pass now (ex.TestB)", false},
		{"a failing test reported", "echo 6", Best{}, pass + `{"Action":"fail","Package":"ex","Test":"TestC"}` + "\n", Fail, "reports failing tests (ex.TestC)", false},
		// A package that failed with no failing test (it did not build)
		// is an errored test, and fails the guard like a failing one.
		{"an errored test reported", "echo 6", Best{}, pass + `{"Action":"fail","Package":"exb"}` + "\n", Fail, "reports failing tests (exb)", false},
	} {
		var cfg config.Config
		cfg.Guard.Ratchet = []string{"sh", "-c", c.script}
		ev := &testresults.Stream{}
		ev.Write([]byte(c.output))
		ev.Close()
		rec, outcome, code, msg := runRatchet(in, env, cfg, time.Now().Add(time.Minute), logPath, c.best, ev)
		if outcome != c.outcome || !strings.Contains(msg, c.says) || (outcome == Pass) != (code == exit.OK) {
			t.Errorf("%s: outcome %s, code %d, message %q; want %s saying %q", c.name, outcome, code, msg, c.outcome, c.says)
		}
		if rec.Held != (c.outcome == Pass) {
			t.Errorf("%s: held %v", c.name, rec.Held)
		}
		// What was not known stays -1: no best; no count and no names
		// from a ratchet that gave none.
		if !c.best.Found && rec.Best != -1 {
			t.Errorf("%s: best %d with none, want -1", c.name, rec.Best)
		}
		if c.noCount && (rec.Count != -1 || rec.Names != -1) {
			t.Errorf("%s: count %d, names %d; want -1", c.name, rec.Count, rec.Names)
		}
	}
}

// TestList: a message names ten tests and counts the rest.
func TestList(t *testing.T) {
	ten := strings.Split("a b c d e f g h i j", " ")
	if got := list(ten); got != strings.Join(ten, ", ") {
		t.Errorf("list(ten) = %q", got)
	}
	if got := list(append(ten, "k")); got != strings.Join(ten, ", ")+" and 1 more" {
		t.Errorf("list(eleven) = %q", got)
	}
}
