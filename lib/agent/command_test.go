package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/schema"
)

// TestReadOutputFile: the output is read only from a regular file of at
// most AgentOutputMaxBytes: none, an empty one, a link, a directory, a
// FIFO and one byte too many are each refused with their class.
func TestReadOutputFile(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	os.WriteFile(p("ok.json"), []byte(`{"status":"done"}`), 0o644)
	os.WriteFile(p("empty.json"), nil, 0o644)
	os.WriteFile(p("max.json"), bytes.Repeat([]byte(" "), schema.AgentOutputMaxBytes), 0o644)
	os.WriteFile(p("over.json"), bytes.Repeat([]byte(" "), schema.AgentOutputMaxBytes+1), 0o644)
	os.Symlink(p("ok.json"), p("link.json"))
	os.Mkdir(p("dir.json"), 0o755)
	if err := syscall.Mkfifo(p("fifo.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, class, says string
		n                 int
	}{
		{"ok.json", "", "", 17},
		{"max.json", "", "", schema.AgentOutputMaxBytes},
		{"missing.json", ClassNoOutput, "did not write", 0},
		{"empty.json", ClassNoOutput, "left $RUNNER_OUTPUT empty", 0},
		{"over.json", ClassInvalidOutput, "larger than", 0},
		{"link.json", ClassInvalidOutput, "but a symlink", 0},
		{"dir.json", ClassInvalidOutput, "but a directory", 0},
		{"fifo.json", ClassInvalidOutput, "but a special file", 0},
	} {
		data, class, msg := ReadOutputFile(p(c.name))
		if class != c.class || !strings.Contains(msg, c.says) || len(data) != c.n {
			t.Errorf("%s: %d bytes, %q, %q; want %d, %q saying %q", c.name, len(data), class, msg, c.n, c.class, c.says)
		}
	}
}

// TestCommandRun: the command backend runs [agent] bin with its
// arguments in the root, the prompt on stdin and the model in
// RUNNER_AGENT_MODEL, and reads $RUNNER_OUTPUT; a failure report is the
// session's class (with its reset time), a deadline a timeout; no bin is
// an error that says what to set.
func TestCommandRun(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(t.TempDir(), "agent")
	script := `#!/bin/sh
prompt=$(cat)
case "$1" in
report) echo '{"error":{"class":"rate_limit","message":"slow  down","reset_at":"2026-01-02T03:04:05Z"}}' > "$RUNNER_OUTPUT" ;;
sleep) exec sleep 60 ;;
*) printf '{"status":"done","summary":"%s %s %s"}' "$prompt" "$RUNNER_AGENT_MODEL" "$(basename "$PWD")" > "$RUNNER_OUTPUT" ;;
esac
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args []string, deadline time.Duration) Result {
		t.Helper()
		out := filepath.Join(t.TempDir(), "output.json")
		var log bytes.Buffer
		req := Request{Prompt: []byte("hi"), Root: root, IterDir: filepath.Dir(out), OutputPath: out, Deadline: time.Now().Add(deadline),
			Config: config.Agent{Backend: "command", Bin: bin, Model: "m", ExtraArgs: args}, Log: &log}
		res, err := Command{}.Run(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(nil, time.Minute); res.Class != "" || string(res.Output) != `{"status":"done","summary":"hi m `+filepath.Base(root)+`"}` || res.Model != "m" {
		t.Errorf("a session: %q, class %q", res.Output, res.Class)
	}
	if res := run([]string{"report"}, time.Minute); res.Class != ClassRateLimit || res.Message != "slow down" || res.ResetAt != "2026-01-02T03:04:05Z" || res.Output != nil {
		t.Errorf("a failure report: %+v", res)
	}
	if res := run([]string{"sleep"}, 300*time.Millisecond); res.Class != ClassTimeout {
		t.Errorf("a deadline: class %q, %q", res.Class, res.Message)
	}
	if _, err := (Command{}).Run(context.Background(), Request{}); err == nil || !strings.Contains(err.Error(), "set [agent] bin") {
		t.Errorf("no bin: %v", err)
	}
}
