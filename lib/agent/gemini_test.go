package agent

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"
)

// The session runs in the process the runner starts: Gemini CLI gets
// GEMINI_CLI_NO_RELAUNCH=true, without which it would start itself again as
// a child to raise its heap limit (twice the start-up, and a parent that
// ignores SIGTERM).
func TestGeminiRunsInOneProcess(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "")
	var got []string
	req := Request{
		Root: t.TempDir(), IterDir: t.TempDir(), Mode: "execute",
		Deadline: time.Now().Add(time.Minute),
		Log:      io.Discard, Events: io.Discard,
		Sandbox: func(argv, env []string) ([]string, error) {
			got = env
			return []string{"true"}, nil
		},
	}
	req.Config.Bin = "true"
	if _, err := (Gemini{}).Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got, "GEMINI_CLI_NO_RELAUNCH=true") {
		t.Fatalf("the CLI's environment has no GEMINI_CLI_NO_RELAUNCH=true:\n%q", got)
	}
}
