package agent

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"
)

// sessionEnv is the environment backend b gives its CLI for one session
// whose node adds extraEnv: the session runs `true` in the CLI's place (the
// Sandbox hook sees the argv and the environment first), with a home and a
// cache directory of the test's own.
func sessionEnv(t *testing.T, b Backend, extraEnv ...string) []string {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var got []string
	req := Request{
		Root: t.TempDir(), IterDir: t.TempDir(), Mode: "execute",
		Deadline: time.Now().Add(time.Minute),
		Log:      io.Discard, Events: io.Discard,
		ExtraEnv: extraEnv,
		Sandbox: func(argv, env []string) ([]string, error) {
			got = env
			return []string{"true"}, nil
		},
	}
	req.Config.Bin = "true"
	if _, err := b.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	return got
}

// The session runs in the process the runner starts: Gemini CLI gets
// GEMINI_CLI_NO_RELAUNCH=true, without which it would start itself again as
// a child to raise its heap limit (twice the start-up, and a parent that
// ignores SIGTERM).
func TestGeminiRunsInOneProcess(t *testing.T) {
	t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "")
	if env := sessionEnv(t, Gemini{}); !slices.Contains(env, "GEMINI_CLI_NO_RELAUNCH=true") {
		t.Fatalf("the CLI's environment has no GEMINI_CLI_NO_RELAUNCH=true:\n%q", env)
	}
}
