package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// writeExec writes an executable file.
func writeExec(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestReadableFor: the directory of the home each hidden path lies in,
// two or three deep where programs share a directory, once each; nothing
// for what the root, a readable or a writable path shows, nor outside the
// home, nor without a sandbox.
func TestReadableFor(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	root := filepath.Join(home, "src", "project")
	c := cfg()
	c.Mode = config.SandboxBwrap
	c.Readable = []string{"~/.nvm"}
	c.Writable = []string{"~/.codex"}
	paths := []string{
		home + "/.pyenv/shims/python",
		home + "/.pyenv/libexec/pyenv",
		home + "/.npm-global/lib/node_modules/@openai/codex/bin/codex.js",
		home + "/.local/bin/pytest",
		home + "/.local/share/pipx/venvs/pytest/bin/python",
		home + "/.local/share",
		home + "/.config/gh/hosts.yml",
		home + "/.nvm/versions/node/v20/bin/node",
		home + "/.codex/config.toml",
		root + "/.venv/bin/python",
		"/usr/bin/python3",
		home,
	}
	want := []string{"~/.pyenv", "~/.npm-global", "~/.local/bin", "~/.local/share/pipx", "~/.local", "~/.config/gh"}
	if got := ReadableFor(c, root, paths); !slices.Equal(got, want) {
		t.Errorf("ReadableFor = %q, want %q", got, want)
	}
	c.Mode = config.SandboxNone
	if got := ReadableFor(c, root, paths); got != nil {
		t.Errorf("ReadableFor without a sandbox = %q", got)
	}
	c.Mode = config.SandboxBwrap
	if got := ReadableFor(c, home, paths); got != nil {
		t.Errorf("ReadableFor with the home in the repository = %q", got)
	}
	if got := AddReadable([]string{"~/.pyenv", "~/.nvm"}, ".runner/state/config.toml"); got != `add "~/.pyenv", "~/.nvm" to [sandbox] readable of .runner/state/config.toml (the sandbox hides your home directory)` {
		t.Errorf("AddReadable = %q", got)
	}
}

// TestProgramPaths: a program as PATH finds it, where its link leads,
// and its script's interpreter (through env too) with where that leads;
// a name with a slash is relative to the directory; nothing for a
// program found nowhere.
func TestProgramPaths(t *testing.T) {
	dir := t.TempDir()
	writeExec(t, dir+"/prefix/lib/cli/bin/cli.js", "#!/usr/bin/env -S node --no-warnings\n")
	if err := os.MkdirAll(dir+"/prefix/bin", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/cli/bin/cli.js", dir+"/prefix/bin/cli"); err != nil {
		t.Fatal(err)
	}
	writeExec(t, dir+"/toolchain/bin/node", "#!/bin/sh\n")
	writeExec(t, dir+"/repo/run-tests", "#!"+dir+"/toolchain/bin/node\n")
	t.Setenv("PATH", dir+"/prefix/bin:"+dir+"/toolchain/bin:/usr/bin:/bin")
	want := []string{dir + "/prefix/bin/cli", dir + "/prefix/lib/cli/bin/cli.js", dir + "/toolchain/bin/node"}
	if got := ProgramPaths(dir, "cli"); !slices.Equal(got, want) {
		t.Errorf("ProgramPaths(cli) = %q, want %q", got, want)
	}
	want = []string{dir + "/repo/run-tests", dir + "/toolchain/bin/node"}
	if got := ProgramPaths(dir+"/repo", "./run-tests"); !slices.Equal(got, want) {
		t.Errorf("ProgramPaths(./run-tests) = %q, want %q", got, want)
	}
	if got := ProgramPaths(dir, "no-such-program"); got != nil {
		t.Errorf("ProgramPaths(missing) = %q", got)
	}
	if got := Interpreter(dir + "/toolchain/bin/node"); got != "/bin/sh" {
		t.Errorf("Interpreter = %q", got)
	}
	if got := Interpreter("/no/such/file"); got != "" {
		t.Errorf("Interpreter(missing) = %q", got)
	}
}

// TestPathsIn: the absolute paths an output names, file:// URLs and
// quoted ones included, without a position after them.
func TestPathsIn(t *testing.T) {
	out := "file:///home/u/.npm-global/lib/codex.js:108\n" +
		"/home/u/.pyenv/shims/python: line 5: /home/u/.pyenv/libexec/pyenv: No such file or directory\n" +
		"Error: Cannot find module '/home/u/x/index.js'\n" +
		"see a/b and http://example.com/x\n"
	want := []string{"/home/u/.npm-global/lib/codex.js", "/home/u/.pyenv/shims/python", "/home/u/.pyenv/libexec/pyenv", "/home/u/x/index.js"}
	if got := PathsIn([]byte(out)); !slices.Equal(got, want) {
		t.Errorf("PathsIn = %q, want %q", got, want)
	}
}

// TestProbeNamesTheCause: a CLI under the hidden home whose script
// cannot find its modules there fails the dry run with node's own
// error line, not its last line ("Node.js v…"), and the directory to
// show is named; readable makes it pass.
func TestProbeNamesTheCause(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is needed: ", err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeExec(t, home+"/.npm-global/lib/node_modules/cli/bin/cli.js", "#!"+node+"\nrequire('../lib/impl.js')\n")
	writeExec(t, home+"/.npm-global/lib/node_modules/cli/lib/impl.js", "console.log('cli 1.0.0')\n")
	if err := os.MkdirAll(home+"/.npm-global/bin", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../lib/node_modules/cli/bin/cli.js", home+"/.npm-global/bin/cli"); err != nil {
		t.Fatal(err)
	}
	root := repo(t)
	c := cfg()
	c.Mode = config.SandboxBwrap
	s, err := New(c, root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Probe(nil, []string{home + "/.npm-global/bin/cli", "--version"})
	var pe *ProbeError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "Error: Cannot find module '../lib/impl.js'") || strings.Contains(err.Error(), "Node.js") {
		t.Fatalf("Probe = %v, want node's error line", err)
	}
	paths := append(ProgramPaths(root, pe.Argv[0]), PathsIn(pe.Output)...)
	if got := ReadableFor(c, root, paths); !slices.Equal(got, []string{"~/.npm-global"}) {
		t.Errorf("ReadableFor = %q", got)
	}
	c.Readable = []string{"~/.npm-global"}
	if s, err = New(c, root, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(nil, []string{home + "/.npm-global/bin/cli", "--version"}); err != nil {
		t.Errorf("Probe with the prefix readable = %v", err)
	}
}
