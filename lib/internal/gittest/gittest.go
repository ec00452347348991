// Package gittest runs the real git for tests: in a directory, with a fixed
// identity and neither system nor user configuration, so that commits do
// not depend on the machine.
package gittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Vars are the variables Run adds to git's environment, with home as
// HOME (a test that runs git in process sets them with t.Setenv).
func Vars(home string) []string {
	return []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com"}
}

// Setenv sets Vars(home) in this process's environment for the test (t.Setenv),
// for a test that runs git in process (lib/git) or starts it without Run.
func Setenv(t testing.TB, home string) {
	t.Helper()
	for _, kv := range Vars(home) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Run runs git args in dir (also its HOME) and returns its output,
// trimmed; a failure fails the test with git's output.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), Vars(dir)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
