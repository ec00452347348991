package ui

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/treeloop/treeloop/lib/command/agentexec"
	"github.com/treeloop/treeloop/lib/command/contextwrite"
	"github.com/treeloop/treeloop/lib/command/evalreport"
	"github.com/treeloop/treeloop/lib/command/evalrun"
	"github.com/treeloop/treeloop/lib/command/guardrun"
	"github.com/treeloop/treeloop/lib/command/iterlog"
	"github.com/treeloop/treeloop/lib/command/loopcommit"
	"github.com/treeloop/treeloop/lib/command/runnercancel"
	"github.com/treeloop/treeloop/lib/command/runnercheck"
	"github.com/treeloop/treeloop/lib/command/runnerenter"
	"github.com/treeloop/treeloop/lib/command/runnerexport"
	"github.com/treeloop/treeloop/lib/command/runnerinit"
	"github.com/treeloop/treeloop/lib/command/runnerrecord"
	"github.com/treeloop/treeloop/lib/command/runnerstart"
	"github.com/treeloop/treeloop/lib/command/runnerstatus"
	"github.com/treeloop/treeloop/lib/command/runnerworktree"
	"github.com/treeloop/treeloop/lib/command/stepbegin"
	"github.com/treeloop/treeloop/lib/command/stepend"
	"github.com/treeloop/treeloop/lib/command/treeedit"
	"github.com/treeloop/treeloop/lib/command/treeimport"
	"github.com/treeloop/treeloop/lib/command/treeselect"
	"github.com/treeloop/treeloop/lib/command/treeupdate"
	"github.com/treeloop/treeloop/lib/command/treevalidate"
)

// commands maps each treeloop command that the loop and the answer tests
// run to the Main its cmd/<name>/main.go calls (runner-ui, which imports
// this package, is not among them: the tests serve the UI in-process).
// The test binary runs as one of them when started under its name
// (TestMain), so a test's loop runs the commands' own code without a
// `go build` of the commands: linking twenty binaries took most of a
// minute, once per test binary and so once per mutant of `just mutate`.
var commands = map[string]func(args []string, stdin io.Reader, stdout, stderr io.Writer) int{
	"agent-exec":      agentexec.Main,
	"context-write":   contextwrite.Main,
	"eval-report":     evalreport.Main,
	"eval-run":        evalrun.Main,
	"guard-run":       guardrun.Main,
	"iter-log":        iterlog.Main,
	"loop-commit":     loopcommit.Main,
	"runner-cancel":   runnercancel.Main,
	"runner-check":    runnercheck.Main,
	"runner-enter":    runnerenter.Main,
	"runner-export":   runnerexport.Main,
	"runner-init":     runnerinit.Main,
	"runner-record":   runnerrecord.Main,
	"runner-start":    runnerstart.Main,
	"runner-status":   runnerstatus.Main,
	"runner-worktree": runnerworktree.Main,
	"step-begin":      stepbegin.Main,
	"step-end":        stepend.Main,
	"tree-edit":       treeedit.Main,
	"tree-import":     treeimport.Main,
	"tree-select":     treeselect.Main,
	"tree-update":     treeupdate.Main,
	"tree-validate":   treevalidate.Main,
}

// runCommand runs the command the test binary was started as, if any (or
// the attacker of attack_test.go), and exits with its status.
func runCommand() {
	if main, ok := commands[filepath.Base(os.Args[0])]; ok {
		os.Exit(main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv(attackEnv) != "" { // under its own name: the agent of a loop whose commands are the test binary too
		os.Exit(attackMain())
	}
}

// commandDir is a directory of links, one per command, to the test
// binary; removed by TestMain.
var commandDir string

// commandPath makes commandDir once per test binary and returns the PATH
// entries for the commands and the porcelain scripts (tools/).
var commandPath = sync.OnceValues(func() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "runner-ui-bin-")
	if err != nil {
		return "", err
	}
	commandDir = dir
	for name := range commands {
		if err := os.Symlink(self, filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	return dir + string(os.PathListSeparator) + filepath.Join(src, "tools"), nil
})

// TestCommandsComplete: commands names every command under cmd/ but
// runner-ui and the porcelain (whose scripts run from tools/, on
// commandPath), so a loop in these tests never misses one that ships.
func TestCommandsComplete(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	ents, err := os.ReadDir(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(file))), "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		switch e.Name() {
		case "runner-ui", "runner-step", "runner-loop":
			continue
		}
		n++
		if commands[e.Name()] == nil {
			t.Errorf("cmd/%s is not in commands", e.Name())
		}
	}
	if n != len(commands) {
		t.Errorf("commands has %d entries, cmd/ %d commands besides runner-ui", len(commands), n)
	}
}
