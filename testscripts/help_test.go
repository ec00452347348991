package testscripts

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// subcommands are the commands a kong help text lists under "Commands:".
func subcommands(help string) []string {
	_, after, ok := strings.Cut(help, "\nCommands:\n")
	if !ok {
		return nil
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z][a-z-]*)\b`).FindAllStringSubmatch(after, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestEveryCommandHelps walks every shipped command (the built binaries),
// every subcommand it lists, and the porcelain: each --help exits 0 with a
// usage line on stdout and nothing on stderr, and names what it does.
func TestEveryCommandHelps(t *testing.T) {
	t.Parallel()
	trackSources(t)
	cmds := append(plumbing(t), porcelain...)
	seen := 0
	for _, name := range cmds {
		help := runHelp(t, name)
		for _, sub := range subcommands(help) {
			runHelp(t, name, sub)
			seen++
		}
	}
	if seen < 10 {
		t.Errorf("only %d subcommands found: the walk reads no Commands: section", seen)
	}
}

// runHelp runs `name args... --help` and returns its stdout.
func runHelp(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, append(args, "--help")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	what := strings.Join(append([]string{name}, args...), " ")
	if err := cmd.Run(); err != nil {
		t.Errorf("%s --help: %v: %s", what, err, firstLines(stderr.String(), 3))
		return stdout.String()
	}
	if stderr.Len() > 0 {
		t.Errorf("%s --help wrote to stderr: %s", what, firstLines(stderr.String(), 3))
	}
	if !strings.HasPrefix(stdout.String(), "Usage: "+what) && !strings.Contains(stdout.String(), "\nUsage: "+what+" ") {
		t.Errorf("%s --help: stdout has no usage line: %s", what, firstLines(stdout.String(), 2))
	}
	if len(strings.Split(strings.TrimSpace(stdout.String()), "\n")) < 3 {
		t.Errorf("%s --help says too little: %q", what, stdout.String())
	}
	return stdout.String()
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
