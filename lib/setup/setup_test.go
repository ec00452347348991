package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// setupCase is one run of [setup] commands and what it leaves.
type setupCase struct {
	name     string
	cmds     [][]string
	cancel   bool   // the cancel file stands
	ran      int    // commands that succeeded
	code     int    // the error's exit code, 0 for none
	says     string // in the error
	outcome  string // setup.json's
	commands int    // the commands setup.json records
}

// TestRun: the setup commands run in order in the root with the run's
// variables, their output in setup.log, their ends in setup.json; the
// first that fails (exit status, signal, not found) stops the rest as a
// runner error naming it and the log; the cancel file stops it before a
// command; no commands is nothing run and nothing written; IsDone says
// whether it completed.
func TestRun(t *testing.T) {
	for _, c := range []setupCase{
		{name: "none", outcome: ""},
		{name: "all", cmds: [][]string{{"sh", "-c", `echo "one $RUNNER_RUN_ID" > one.txt`}, {"sh", "-c", "echo two; test -f one.txt"}}, ran: 2, outcome: Done, commands: 2},
		{name: "a failure", cmds: [][]string{{"true"}, {"sh", "-c", "exit 4"}, {"touch", "never"}}, ran: 1, code: exit.RunnerError,
			says: "setup command 2 of 3 (`sh -c exit 4`) failed (exit 4): see .runner/iterations/run-a/setup.log", outcome: Failed, commands: 2},
		{name: "a signal", cmds: [][]string{{"sh", "-c", "kill -KILL $$"}}, code: exit.RunnerError, says: "failed (killed)", outcome: Failed, commands: 1},
		{name: "not found", cmds: [][]string{{"/nonexistent/setup"}}, code: exit.RunnerError, says: "could not start", outcome: Failed, commands: 1},
		{name: "canceled", cmds: [][]string{{"touch", "never"}}, cancel: true, code: exit.SIGINT, says: "setup stopped before setup command 1 of 1", outcome: Interrupted, commands: 0},
	} {
		t.Run(c.name, func(t *testing.T) { runSetupCase(t, c) })
	}
}

func runSetupCase(t *testing.T, c setupCase) {
	root := t.TempDir()
	if c.cancel {
		os.MkdirAll(filepath.Join(root, filepath.Dir(layout.Cancel)), 0o755)
		os.WriteFile(filepath.Join(root, layout.Cancel), nil, 0o644)
	}
	cfg := config.Default()
	cfg.Setup.Commands = c.cmds
	ran, err := Run(root, "run-a", cfg)
	if ran != c.ran || exit.Code(err) != c.code || c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)) {
		t.Fatalf("Run = %d, %v; want %d, exit %d saying %q", ran, err, c.ran, c.code, c.says)
	}
	if _, err := os.Stat(filepath.Join(root, "never")); err == nil {
		t.Error("a command after the stop ran")
	}
	var rec Record
	rerr := iterdir.Read(filepath.Join(root, Dir("run-a")), RecordFile, &rec)
	if c.outcome == "" {
		if rerr == nil {
			t.Errorf("setup.json written with no commands: %+v", rec)
		}
		return
	}
	if rerr != nil || rec.Outcome != c.outcome || len(rec.Commands) != c.commands || rec.RunID != "run-a" {
		t.Errorf("setup.json %+v (%v)", rec, rerr)
	}
	if IsDone(root, "run-a") != (c.outcome == Done) {
		t.Errorf("IsDone = %v", !(c.outcome == Done))
	}
	if c.outcome == Done {
		if one, _ := os.ReadFile(filepath.Join(root, "one.txt")); string(one) != "one run-a\n" {
			t.Errorf("one.txt %q: the command did not run in the root with RUNNER_RUN_ID", one)
		}
		if log, _ := os.ReadFile(filepath.Join(root, Dir("run-a"), LogFile)); !strings.Contains(string(log), "$ sh -c echo two; test -f one.txt\ntwo\n") {
			t.Errorf("setup.log %q", log)
		}
	}
}
