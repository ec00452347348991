// Package testscripts runs the .txtar scripts in this directory against the
// real treeloop commands, installed on $PATH by testscript.Main.
package testscripts

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/treeloop/treeloop/lib/command/treeselect"
	"github.com/treeloop/treeloop/lib/command/treeupdate"
	"github.com/treeloop/treeloop/lib/command/treevalidate"
)

// mainFunc is the signature of every command package's Main.
type mainFunc func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// commands maps each command name to its Main; files named
// cmd_<tool>_test.go register theirs in init.
var commands = map[string]mainFunc{
	"tree-validate": treevalidate.Main,
	"tree-select":   treeselect.Main,
	"tree-update":   treeupdate.Main,
}

func TestMain(m *testing.M) {
	cmds := map[string]func(){}
	for name, f := range commands {
		cmds[name] = func() { os.Exit(f(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
	}
	testscript.Main(m, cmds)
}

// repoRoot is the treeloop checkout (for hooks/ and tools/).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 ".",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("TESTSCRIPT_UPDATE") == "1",
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			root := repoRoot()
			env.Setenv("HOME", home)
			env.Setenv("TREELOOP_SRC", root)
			env.Setenv("PATH", filepath.Join(root, "tools")+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Test Author")
			env.Setenv("GIT_AUTHOR_EMAIL", "author@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Test Committer")
			env.Setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
			env.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
			env.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
			env.Setenv("LC_ALL", "C")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": exitcode,
		},
	})
}

// exitcode N cmd args... runs cmd and fails unless it exits with exactly N;
// stdout and stderr are kept for the next assertions, as with exec.
func exitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		got = ee.ExitCode()
	default:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}
