package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/trace"
)

// plain is a command with the -C flag that records the directory it ran
// in and returns err.
type plain struct {
	Chdir
	err error
	dir string
}

func (c *plain) Run(env *Env) error {
	c.dir = env.Dir
	return c.err
}

// run runs cmd as Run does and returns its exit code, stdout and stderr.
func run(cmd any, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Run("tool", "A test command.", cmd, args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// -C names the directory the command runs in, relative to the current
// one; without it the command runs in the current directory; a -C that
// does not exist or is a file is a usage error naming it, and the command
// does not run.
func TestRunChdir(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args    []string
		code    int
		dir     string // the command's Env.Dir; "" when it must not run
		message string
	}{
		{nil, 0, wd, ""},
		{[]string{"-C", dir}, 0, dir, ""},
		{[]string{"--chdir=" + dir}, 0, dir, ""},
		{[]string{"-C", "testdata-none"}, exit.Usage, "", "tool: -C testdata-none: stat " + filepath.Join(wd, "testdata-none") + ": no such file or directory\n"},
		{[]string{"-C", file}, exit.Usage, "", "tool: -C " + file + ": not a directory\n"},
	} {
		cmd := &plain{}
		code, stdout, stderr := run(cmd, c.args...)
		if code != c.code || cmd.dir != c.dir || stdout != "" || stderr != c.message {
			t.Errorf("%q: exit %d, ran in %q, stdout %q, stderr %q; want exit %d, %q, stderr %q", c.args, code, cmd.dir, stdout, stderr, c.code, c.dir, c.message)
		}
	}
}

// An error the command returns is one line, "<name>: <error>", and its
// exit code; a Silent one only its code; none exit 0 and silence.
func TestRunReportsErrors(t *testing.T) {
	for _, c := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, exit.OK, ""},
		{exit.Errorf(exit.Negative, "tree: invalid"), exit.Negative, "tool: tree: invalid\n"},
		{errors.New("disk full"), exit.RunnerError, "tool: disk full\n"},
		{Silent(3), 3, ""},
	} {
		code, stdout, stderr := run(&plain{err: c.err})
		if code != c.code || stdout != "" || stderr != c.stderr {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, stderr %q", c.err, code, stdout, stderr, c.code, c.stderr)
		}
	}
}

// --version prints "<name> <version>" on stdout and exits 0 without
// running the command.
func TestRunVersion(t *testing.T) {
	cmd := &plain{}
	code, stdout, stderr := run(cmd, "--version")
	if code != 0 || stdout != "tool "+Version()+"\n" || stderr != "" || cmd.dir != "" {
		t.Errorf("--version: exit %d, stdout %q, stderr %q, ran %v", code, stdout, stderr, cmd.dir != "")
	}
}

// Without GOGC a command collects rarely (GOGC=400) under a 2 GiB soft
// memory limit; a GOGC the user set is left as the runtime read it.
func TestRunGCDefaults(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))

	t.Setenv("GOGC", "")
	run(&plain{})
	if pct, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); pct != 400 || limit != 2<<30 {
		t.Errorf("GOGC unset: GC percent %d, memory limit %d; want 400, %d", pct, limit, 2<<30)
	}

	t.Setenv("GOGC", "100")
	debug.SetMemoryLimit(1 << 40)
	run(&plain{})
	if pct, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); pct != 100 || limit != 1<<40 {
		t.Errorf("GOGC=100: GC percent %d, memory limit %d; want them unchanged", pct, limit)
	}
}

// tracing turns RUNNER_TRACE's lines on for the test.
func tracing(t *testing.T) {
	on := trace.On
	trace.On = true
	t.Cleanup(func() { trace.On = on })
}

type traced struct {
	Chdir
	Begin begin `cmd:"" help:"Begin."`
}

type begin struct{}

func (begin) Run(*Env) error { return nil }

// While tracing, a command's line names it with its subcommand
// (iter-log-begin) and says its exit code.
func TestRunTracesSubcommand(t *testing.T) {
	tracing(t)
	code, _, stderr := run(&traced{}, "begin")
	if code != 0 || !strings.HasPrefix(stderr, "trace: cmd=tool-begin ms=") || !strings.HasSuffix(stderr, " exit=0\n") {
		t.Errorf("exit %d, stderr %q; want the trace line of tool-begin", code, stderr)
	}
}

// Call runs a command's core as Run runs the command: its diagnostics and
// warnings under the command's name, its exit code, a panic as a runner
// error with its stack, and while tracing one line naming the command
// and its subcommand and the process it ran in.
func TestCall(t *testing.T) {
	var stderr bytes.Buffer
	env := &Env{Name: "runner-step", Stderr: &stderr, Dir: "/repo"}
	code := Call("iter-log begin", env, func(e *Env) error {
		if e.Dir != "/repo" {
			t.Errorf("core ran in %q", e.Dir)
		}
		e.Warnf("slow %s", "disk")
		e.Errorf("one of %d", 2)
		return exit.Errorf(exit.Negative, "no run")
	})
	want := "iter-log: warning: slow disk\niter-log: one of 2\niter-log: no run\n"
	if code != exit.Negative || stderr.String() != want || env.Name != "runner-step" {
		t.Errorf("exit %d, stderr %q, caller's name %q; want exit 1, stderr %q", code, stderr.String(), env.Name, want)
	}

	for _, c := range []struct {
		core func(*Env) error
		code int
	}{
		{func(*Env) error { return nil }, 0},
		{func(*Env) error { return Silent(4) }, 4},
	} {
		stderr.Reset()
		if code := Call("loop-commit", env, c.core); code != c.code || stderr.Len() != 0 {
			t.Errorf("Call = %d, stderr %q; want %d and silence", code, stderr.String(), c.code)
		}
	}

	stderr.Reset()
	code = Call("loop-commit check", env, func(*Env) error { panic("boom") })
	if got := stderr.String(); code != exit.RunnerError || !strings.HasPrefix(got, "loop-commit: internal error: boom\n") || !strings.Contains(got, "goroutine ") {
		t.Errorf("a panic: exit %d, stderr %q", code, got)
	}

	tracing(t)
	trace.SetName("runner-step")
	stderr.Reset()
	code = Call("loop-commit check", env, func(*Env) error { return nil })
	if got := stderr.String(); code != 0 || !strings.HasPrefix(got, "trace: cmd=loop-commit-check ms=") || !strings.HasSuffix(got, " exit=0 in=runner-step\n") {
		t.Errorf("traced: exit %d, stderr %q", code, got)
	}
}

// Abs resolves against the -C directory; Rel shows a path inside it
// relative to it, with slashes, and any other path as given.
func TestEnvAbsRel(t *testing.T) {
	env := &Env{Dir: "/repo"}
	for p, want := range map[string]string{"a/b": "/repo/a/b", "/etc/../tmp": "/tmp", ".": "/repo"} {
		if got := env.Abs(p); got != want {
			t.Errorf("Abs(%q) = %q, want %q", p, got, want)
		}
	}
	for p, want := range map[string]string{"/repo/a/b": "a/b", "/repo": ".", "/other/x": "/other/x", "/repository": "/repository", "rel": "rel"} {
		if got := env.Rel(p); got != want {
			t.Errorf("Rel(%q) = %q, want %q", p, got, want)
		}
	}
}
