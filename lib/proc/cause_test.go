package proc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCause: the lines that say why a program failed, picked from what
// real programs printed (testdata/cause, captured from node, bwrap, a
// pyenv shim, env, bash, dash under just, Python, cargo), not the last
// line a runtime adds (node's "Node.js v20…") nor its stack frames.
func TestCause(t *testing.T) {
	cases := []struct {
		file string
		want []string
	}{
		{"codex-hidden.txt", []string{"Error: Missing optional dependency @openai/codex-linux-x64. Reinstall Codex: npm install -g @openai/codex@latest"}},
		{"node-cjs.txt", []string{"Error: Cannot find module 'left-pad-missing'"}},
		{"node-esm.txt", []string{"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'left-pad-missing' imported from /home/u/b.mjs"}},
		{"pyenv-shim.txt", []string{"/home/u/.pyenv/shims/python: line 5: /home/u/.pyenv/libexec/pyenv: No such file or directory"}},
		{"pyenv-command.txt", []string{"pyenv: python2: command not found"}},
		{"bwrap-execvp.txt", []string{"bwrap: execvp /home/u/.pyenv/shims/python: No such file or directory"}},
		{"env-python.txt", []string{"/usr/bin/env: 'python': No such file or directory"}},
		{"python-module.txt", []string{"ModuleNotFoundError: No module named 'nosuchmod'"}},
		{"just-recipe.txt", []string{"sh: 1: pytestx: not found", "error: recipe `ci` failed on line 2 with exit code 127"}},
		{"bash-not-found.txt", []string{"bash: line 1: nosuch: command not found"}},
		{"cargo-command.txt", []string{"error: no such command: `nosuch`"}},
		{"ansi.txt", []string{"error: could not compile `demo` (bin \"demo\") due to 1 previous error"}},
		{"no-cause.txt", []string{"exiting early"}},
	}
	for _, c := range cases {
		out, err := os.ReadFile(filepath.Join("testdata", "cause", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if got := Cause(out); !slices.Equal(got, c.want) {
			t.Errorf("%s: Cause = %q, want %q", c.file, got, c.want)
		}
	}
}

// TestCauseEdges: nothing but blanks is nil; nothing but noise keeps the
// last line; no more than three lines, each cut to 300 runes; a repeated
// line once; an indented cause when no unindented line names one, and
// only then; the first line when the rest is noise.
func TestCauseEdges(t *testing.T) {
	long := strings.Repeat("é", 400)
	cases := []struct {
		name, out string
		want      []string
	}{
		{"blank", " \n\t\n", nil},
		{"noise only", "Traceback (most recent call last):\nNode.js v20.20.2\n", []string{"Node.js v20.20.2"}},
		{"at most three", "error 1\nerror 2\nerror 3\nerror 4\n", []string{"error 1", "error 2", "error 3"}},
		{"repeated", "fatal: x\nfatal: x\n", []string{"fatal: x"}},
		{"long", "error: " + long, []string{"error: " + strings.Repeat("é", 293) + "…"}},
		{"indented only", "summary:\n    cannot open db\n", []string{"cannot open db"}},
		// An unindented cause is picked before an indented one, whatever
		// their order; a tab indents as spaces do.
		{"unindented first", "    error in a detail\nError: the cause\n", []string{"Error: the cause"}},
		{"tab indented", "\terror in a detail\nError: the cause\n", []string{"Error: the cause"}},
		{"tab frame", "summary:\n\tat main (/x.js:1:1)\n", []string{"summary:"}},
		// Without a cause word, the last line that is not noise, even the
		// first of them.
		{"first line", "exiting early\n    at f (/x.js:1:1)\n    at g (/x.js:2:1)\n", []string{"exiting early"}},
		{"exactly 300 runes", "error: " + strings.Repeat("é", 293), []string{"error: " + strings.Repeat("é", 293)}},
	}
	for _, c := range cases {
		if got := Cause([]byte(c.out)); !slices.Equal(got, c.want) {
			t.Errorf("%s: Cause = %q, want %q", c.name, got, c.want)
		}
	}
	if got := CauseLine([]byte("sh: 1: x: not found\nerror: recipe `ci` failed\n")); got != "sh: 1: x: not found; error: recipe `ci` failed" {
		t.Errorf("CauseLine = %q", got)
	}
}
