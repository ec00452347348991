package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
)

// TestRecordAndReplay: a session recorded into a cassette plays back as
// it ended: its changes applied to the work tree, its events copied, its
// class, usage and answer reported, with no process run; a session with
// no answer and no events records neither; an iteration not recorded,
// an interrupted replay and changes that do not apply are refused.
func TestRecordAndReplay(t *testing.T) {
	root := t.TempDir()
	gittest.Setenv(t, root)
	gittest.Run(t, root, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("old\n"), 0o644)
	gittest.Run(t, root, "add", "-A")
	gittest.Run(t, root, "commit", "-q", "-m", "base")
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("new\n"), 0o644)
	patch := []byte(gittest.Run(t, root, "diff") + "\n")
	gittest.Run(t, root, "checkout", "-q", "--", "a.txt")

	cassette := t.TempDir()
	events := filepath.Join(t.TempDir(), "events.jsonl")
	os.WriteFile(events, []byte(`{"type":"x"}`+"\n"), 0o644)
	s := Session{Backend: "codex", CLIVersion: "1.2", Model: "m", Class: "", ExitCode: 0, Usage: iterdir.Usage{InputTokens: 5}}
	if err := Record(filepath.Join(cassette, "0001"), s, []byte(`{"status":"done"}`), events, patch); err != nil {
		t.Fatal(err)
	}
	if err := Record(filepath.Join(cassette, "0002"), Session{Backend: "codex", Class: ClassRateLimit, Message: "limit", ResetAt: "2026-01-02T03:04:05Z"}, nil, events+".missing", nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CassetteOutput, CassetteEvents} {
		if _, err := os.Stat(filepath.Join(cassette, "0002", f)); err == nil {
			t.Errorf("0002/%s recorded for a session that had none", f)
		}
	}
	var log, ev bytes.Buffer
	req := Request{Root: root, Iteration: 1, Config: config.Agent{Backend: "replay", Cassette: cassette}, Log: &log, Events: &ev}
	res, err := Replay{}.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "new\n" {
		t.Errorf("a.txt after the replay: %q", got)
	}
	if string(res.Output) != `{"status":"done"}` || res.Class != "" || res.Model != "m" || res.CLIVersion != "1.2" || res.Usage.InputTokens != 5 || ev.String() != `{"type":"x"}`+"\n" {
		t.Errorf("replayed %+v, events %q", res, ev.String())
	}
	if !strings.Contains(log.String(), "replayed the codex session") {
		t.Errorf("log %q", log.String())
	}
	req.Iteration = 2
	if res, err := (Replay{}).Run(context.Background(), req); err != nil || res.Class != ClassRateLimit || res.ResetAt != "2026-01-02T03:04:05Z" || res.Output != nil {
		t.Errorf("a rate limit replayed: %+v, %v", res, err)
	}
	req.Iteration = 1 // its changes are in the work tree already: they do not apply again
	if _, err := (Replay{}).Run(context.Background(), req); err == nil || !strings.Contains(err.Error(), "do not apply") {
		t.Errorf("changes applied twice: %v", err)
	}
	req.Iteration = 3
	if _, err := (Replay{}).Run(context.Background(), req); err == nil || !strings.Contains(err.Error(), "no recorded session for iteration 3") {
		t.Errorf("an iteration not recorded: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req.Iteration = 2
	if res, err := (Replay{}).Run(ctx, req); err != nil || res.Class != ClassInterrupted {
		t.Errorf("an interrupted replay: %+v, %v", res, err)
	}
}

// TestReplayRefused: a cassette inside the work tree and no cassette at
// all are refused, saying where to put one.
func TestReplayRefused(t *testing.T) {
	root := t.TempDir()
	if _, err := CassetteDir(root, "tapes", 1); err == nil || !strings.Contains(err.Error(), "inside the repository") {
		t.Errorf("a cassette in the work tree: %v", err)
	}
	if dir, err := CassetteDir(root, "../tapes", 7); err != nil || dir != filepath.Join(filepath.Dir(root), "tapes", "0007") {
		t.Errorf("a cassette beside it: %q, %v", dir, err)
	}
	if _, err := (Replay{}).Run(context.Background(), Request{Root: root}); err == nil || !strings.Contains(err.Error(), "needs a cassette") {
		t.Errorf("no cassette: %v", err)
	}
	if _, err := (Replay{}).Run(context.Background(), Request{Root: root, Config: config.Agent{Cassette: "tapes"}}); err == nil || !strings.Contains(err.Error(), "inside the repository") {
		t.Errorf("a replay from the work tree: %v", err)
	}
}
