package guard

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// TestNamedPrograms: the program each shell, env, pyenv, bwrap or a
// container runtime says it could not start; nothing from a line that
// only mentions a missing file.
func TestNamedPrograms(t *testing.T) {
	out := strings.Join([]string{
		"sh: 1: pytest: not found",
		"bash: line 1: ruff: command not found",
		"/home/u/.pyenv/shims/python: line 5: /home/u/.pyenv/libexec/pyenv: No such file or directory",
		"/usr/bin/env: 'python': No such file or directory",
		"env: ‘node’: No such file or directory",
		"pyenv: python3.12: command not found",
		"bwrap: execvp /home/u/.local/bin/pytest: No such file or directory",
		"/bin/sh: 1: ./run.sh: Permission denied",
		`docker: Error response from daemon: failed to create task: exec: "cargo": executable file not found in $PATH`,
		"sh: 1: pytest: not found",
		"cat: notes.txt: No such file or directory",
		"ls: cannot access 'x y': No such file or directory",
		"python: can't open file '/repo/t.py': [Errno 2] No such file or directory",
		"FileNotFoundError: No such file or directory",
		"not found",
		"E   AssertionError: 3 != 4",
	}, "\n")
	want := []string{"pytest", "ruff", "/home/u/.pyenv/libexec/pyenv", "python", "node", "python3.12", "/home/u/.local/bin/pytest", "./run.sh", "cargo", "notes.txt"}
	if got := NamedPrograms([]byte(out)); !slices.Equal(got, want) {
		t.Errorf("NamedPrograms = %q, want %q", got, want)
	}
}

// TestMayNotHaveStarted: 126, 127 or a failure with a line of bwrap's own.
func TestMayNotHaveStarted(t *testing.T) {
	cases := []struct {
		status int
		out    string
		want   bool
	}{
		{127, "", true},
		{126, "", true},
		{1, "bwrap: execvp pytest: No such file or directory\n", true},
		{1, "FAILED test_x.py::test_y\n", false},
		{2, "the bwrap: mention in a test\n", false},
		{0, "", false},
		// A sandbox that never ran the command, then did (proc.Spec.Restart):
		// only the last start's output counts.
		{0, "bwrap: Can't bind mount /oldroot/x on /newroot/x: No such file or directory\n[treeloop] the sandbox did not start the command (…): starting it again (2 of 3)\njust 1.57.0\n", false},
		{2, "bwrap: Can't bind mount /oldroot/x on /newroot/x: No such file or directory\n[treeloop] the sandbox did not start the command (…): starting it again (2 of 3)\nsh: Illegal option --\n", false},
		{1, "bwrap: Can't bind mount /oldroot/x on /newroot/x: No such file or directory\n[treeloop] the sandbox did not start the command (…): starting it again (2 of 3)\nbwrap: execvp pytest: No such file or directory\n", true},
	}
	for _, c := range cases {
		if got := mayNotHaveStarted(c.status, []byte(c.out)); got != c.want {
			t.Errorf("mayNotHaveStarted(%d, %q) = %v", c.status, c.out, got)
		}
	}
}

// pyenvHome makes a home with a pyenv-like shim for python whose real
// interpreter is /usr/bin/python3 (or, broken, is gone), the only python
// on PATH.
func pyenvHome(t *testing.T, broken bool) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	// No other pyenv's python on PATH (a developer's machine may have one).
	dirs := []string{home + "/.pyenv/shims"}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if !strings.Contains(d, "/.pyenv/") {
			dirs = append(dirs, d)
		}
	}
	t.Setenv("PATH", strings.Join(dirs, ":"))
	write(t, home+"/.pyenv/shims/python", "#!/usr/bin/env bash\nset -e\nexec \""+home+"/.pyenv/libexec/pyenv\" exec python \"$@\"\n")
	target := "exec /usr/bin/python3 \"$@\""
	if broken {
		target = "echo 'pyenv: python: command not found' >&2; exit 127"
	}
	write(t, home+"/.pyenv/libexec/pyenv", "#!/usr/bin/env bash\nshift 2\n"+target+"\n")
	return home
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return dir
}

func starter(root string, mode string, argv ...string) Starter {
	cfg := config.Default()
	cfg.Guard.Command = argv
	cfg.Sandbox.Mode = mode
	return Starter{Root: root, Config: cfg}
}

// TestCannotStartUnconfined: the runner's own probe decides, not the
// guard's exit status: a guard whose interpreter (a pyenv shim) cannot
// start is one; a test that exits 127 by itself, naming a program that
// starts or one found nowhere, is not; nor is a plain failure, which is
// not even probed.
func TestCannotStartUnconfined(t *testing.T) {
	pyenvHome(t, true)
	root := gitRepo(t)
	ctx := context.Background()
	s := starter(root, config.SandboxNone, "python", "-m", "pytest")
	u := s.CannotStart(ctx, 127, []byte("pyenv: python: command not found\n"))
	if u == nil || u.Program != "python" || u.Confined || u.Cause != "pyenv: python: command not found" {
		t.Fatalf("CannotStart(broken shim) = %+v", u)
	}
	if want := "python cannot start (`python --version`: pyenv: python: command not found): install it, or set [guard] command in .runner/state/config.toml"; u.Message() != want {
		t.Errorf("Message = %q\nwant      %q", u.Message(), want)
	}

	pyenvHome(t, false)
	for _, out := range []string{
		"sh: 1: python: not found\n",         // a test that says so, of a program that starts
		"sh: 1: no-such-tool-x: not found\n", // a program found nowhere: the work's own doing
		"",
	} {
		if u := s.CannotStart(ctx, 127, []byte(out)); u != nil {
			t.Errorf("CannotStart(127, %q) = %+v, want nil", out, u)
		}
	}
	s = starter(root, config.SandboxNone, "sh", "-c", "exit 1")
	if u := s.CannotStart(ctx, 1, []byte("sh: 1: no-such-tool-x: not found\n")); u != nil {
		t.Errorf("CannotStart(1) = %+v, want nil", u)
	}
}

// TestCandidate: a program the session could have written (the work
// tree, a writable path) is not probed itself; its interpreter is, when
// it is a script; a guard's own program found nowhere is probed (and
// found not to start), one the output names is not.
func TestCandidate(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	root := gitRepo(t)
	write(t, root+"/run-tests", "#!/bin/sh\nexit 0\n")
	write(t, root+"/bin/tool", "\x7fELF")
	write(t, root+"/missing-interp", "#!/no/such/interpreter\n")
	write(t, home+"/.cache/tools/x", "#!/usr/bin/env sh\n")
	s := starter(root, config.SandboxBwrap, "./run-tests")
	s.Config.Sandbox.Writable = []string{"~/.cache/tools"}
	cases := []struct {
		prog string
		own  bool
		want string
		ok   bool
	}{
		{"./run-tests", true, "/bin/sh", true},
		{"./bin/tool", true, "", false},
		{home + "/.cache/tools/x", false, mustLook(t, "sh"), true},
		{"./missing-interp", true, "/no/such/interpreter", true},
		{"./missing-interp", false, "", false},
		{"no-such-program-x", true, "no-such-program-x", true},
		{"no-such-program-x", false, "", false},
		{"sh", false, mustLook(t, "sh"), true},
	}
	for _, c := range cases {
		got, ok := s.Candidate(c.prog, c.own)
		if got != c.want || ok != c.ok {
			t.Errorf("Candidate(%q, %v) = %q, %v; want %q, %v", c.prog, c.own, got, ok, c.want, c.ok)
		}
	}
	u := s.ProgramStarts(context.Background())
	if u != nil {
		t.Errorf("ProgramStarts(./run-tests) = %+v", u)
	}
}

func mustLook(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCannotStartConfined: under bwrap the shim of a hidden home cannot
// start: the probe says so, with the directory to add to readable; with
// it readable, the guard's program starts. A shim broken outside the
// sandbox too is not the sandbox's doing: install it.
func TestCannotStartConfined(t *testing.T) {
	home := pyenvHome(t, false)
	root := gitRepo(t)
	ctx := context.Background()
	s := starter(root, config.SandboxBwrap, "python", "-m", "pytest")
	u := s.ProgramStarts(ctx)
	if u == nil || !u.Confined || !slices.Equal(u.Readable, []string{"~/.pyenv"}) || !strings.Contains(u.Cause, home+"/.pyenv/libexec/pyenv: No such file or directory") {
		t.Fatalf("ProgramStarts under bwrap = %+v", u)
	}
	if !strings.HasPrefix(u.Message(), "python cannot start in the sandbox (`python --version`: ") || !strings.HasSuffix(u.Message(), `: add "~/.pyenv" to [sandbox] readable of .runner/state/config.toml (the sandbox hides your home directory)`) {
		t.Errorf("Message = %q", u.Message())
	}
	// The guard's own run: exit 127, the shim's words.
	if u := s.CannotStart(ctx, 127, []byte(home+"/.pyenv/shims/python: line 3: "+home+"/.pyenv/libexec/pyenv: No such file or directory\n")); u == nil || u.Program != "python" {
		t.Errorf("CannotStart under bwrap = %+v", u)
	}
	s.Config.Sandbox.Readable = []string{"~/.pyenv"}
	if u := s.ProgramStarts(ctx); u != nil {
		t.Errorf("ProgramStarts with ~/.pyenv readable = %+v", u)
	}
	pyenvHome(t, true)
	s = starter(root, config.SandboxBwrap, "python")
	s.Config.Sandbox.Readable = []string{"~/.pyenv"}
	if u := s.ProgramStarts(ctx); u == nil || u.Confined || !strings.Contains(u.Message(), "install it") {
		t.Errorf("ProgramStarts of a shim broken everywhere = %+v", u)
	}
}

// TestNamedConfined: under bwrap, a program the guard's output names is
// judged without running what the sandbox hides: a name whose every
// program on PATH is hidden cannot start (the directory to show named);
// shown, it is started in the sandbox and starts; a path is judged only
// by whether it is hidden; a program in a writable path of the sandbox,
// which a session could have written, is not judged.
func TestNamedConfined(t *testing.T) {
	home := pyenvHome(t, false)
	root := gitRepo(t)
	ctx := context.Background()
	s := starter(root, config.SandboxBwrap, "sh", "-c", "python check.py")
	u := s.CannotStart(ctx, 127, []byte("sh: 1: python: not found\n"))
	if u == nil || u.Program != "python" || u.Probe != nil || !slices.Equal(u.Readable, []string{"~/.pyenv"}) {
		t.Fatalf("CannotStart(a hidden python) = %+v", u)
	}
	if want := "python cannot start in the sandbox (sh: 1: python: not found; " + home + "/.pyenv/shims/python is hidden there): add \"~/.pyenv\" to [sandbox] readable of .runner/state/config.toml (the sandbox hides your home directory)"; u.Message() != want {
		t.Errorf("Message = %q\nwant      %q", u.Message(), want)
	}
	if u, ok := s.Named(ctx, home+"/.pyenv/shims/python", "bwrap: execvp …"); !ok || u == nil || u.Probe != nil {
		t.Errorf("Named(a hidden path) = %+v, %v", u, ok)
	}
	if u, ok := s.Named(ctx, mustLook(t, "sh"), "…"); ok || u != nil {
		t.Errorf("Named(a path shown) = %+v, %v; want not judged", u, ok)
	}
	s.Config.Sandbox.Readable = []string{"~/.pyenv"}
	if u := s.CannotStart(ctx, 127, []byte("sh: 1: python: not found\n")); u != nil {
		t.Errorf("CannotStart(python shown) = %+v", u)
	}
	s.Config.Sandbox.Readable = nil
	s.Config.Sandbox.Writable = []string{"~/.pyenv"}
	if u, ok := s.Named(ctx, "python", "sh: 1: python: not found"); ok || u != nil {
		t.Errorf("Named(a program in a writable path) = %+v, %v; want not judged", u, ok)
	}
}
