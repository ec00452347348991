package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
)

// A log is served as written when asked for whole, and as text (no
// terminal escape sequences) in a tail and in the text view.
func TestTextViews(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	guard := "\x1b[1mrun\x1b[0m\n\x1b]0;title\x07ok \x1b[32mPASS\x1b[0m\n\x1b[31mFAIL\x1b[0m x\n"
	writeText(t, filepath.Join(dir, ".runner/iterations/run-a/0001/guard.log"), guard)
	base := s.url + "/api/iterations/run-a/1/guard.log"
	if r := get(t, base); r.code != 200 || r.body != guard {
		t.Fatalf("whole: %d %q", r.code, r.body)
	}
	if r := get(t, base, "Range", "bytes=0-4"); r.code != 206 || r.body != guard[:5] {
		t.Fatalf("a range: %d %q", r.code, r.body)
	}
	if r := get(t, base+"?tail=2"); r.body != "ok PASS\nFAIL x\n" || r.header.Get("X-File-Size") != strconv.Itoa(len(guard)) {
		t.Fatalf("tail=2: %q %v", r.body, r.header)
	}
	if r := get(t, base+"?view=text"); r.code != 200 || r.body != "run\nok PASS\nFAIL x\n" {
		t.Fatalf("view=text: %d %q", r.code, r.body)
	}
	if r := get(t, base+"?view=text&tail=1"); r.body != "FAIL x\n" {
		t.Fatalf("view=text&tail=1: %q", r.body)
	}
	for _, bad := range []string{"?view=compact", "?view=raw", "?view=TEXT"} {
		wantError(t, get(t, base+bad), 400, "bad_view")
	}
	wantError(t, get(t, s.url+"/api/iterations/run-a/1/prompt.md?view=compact"), 400, "bad_view")
}

// serveText cleans a file of any shape, whatever its reads return: lines
// across reads, a line longer than it holds, no last newline.
func TestServeText(t *testing.T) {
	long := strings.Repeat("\x1b[1mx\x1b[0m", maxCarry/5)
	for _, in := range []string{
		"", "\x1b[31m", "a\x1b[31mb\x1b[0m\nc", strings.Repeat("line \x1b[32mok\x1b[0m\n", 50000),
		long + "\nend\x1b[0m\n",
	} {
		var out bytes.Buffer
		serveText(&out, iotest.HalfReader(strings.NewReader(in)))
		want := strings.NewReplacer("\x1b[31m", "", "\x1b[32m", "", "\x1b[0m", "", "\x1b[1m", "").Replace(in)
		if out.String() != want {
			t.Errorf("serveText of %d bytes: %d bytes, want %d", len(in), out.Len(), len(want))
		}
	}
}

// The compact view of executor.log: agent-exec's live view of the CLI's
// events among the lines it printed otherwise; the text of a command
// backend's log, a JSON line included; two backends' sessions in one log
// ([agent] fallback) each in its own view.
func TestCompactExecutorLog(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	it2 := filepath.Join(dir, ".runner/iterations/run-a/0002")
	base := s.url + "/api/iterations/run-a/2/executor.log?view=compact"
	codex := readSession(t, "codex", "executor.log")
	writeText(t, filepath.Join(it2, "executor.log"), "[treeloop] a note\n\x1b[33mcodex: a warning\x1b[0m\n"+codex)
	// Before agent.json: the backend is the one events.jsonl opens with.
	writeText(t, filepath.Join(it2, "events.jsonl"), readSession(t, "codex", "events.jsonl"))
	r := get(t, base)
	want := "[treeloop] a note\ncodex: a warning\n" + sessionLogs[0].compact
	if r.code != 200 || r.body != want || r.header.Get("X-Backend") != "codex" {
		t.Fatalf("codex: %d %q %v", r.code, r.body, r.header.Get("X-Backend"))
	}
	if r := get(t, base+"&tail=1"); r.body != want[strings.LastIndex(want[:len(want)-1], "\n")+1:] {
		t.Fatalf("tail=1: %q", r.body)
	}

	// A command backend: its log as text.
	writeJSONFile(t, filepath.Join(it2, iterdir.AgentFile), iterdir.Agent{Version: 1, Backend: "command"})
	os.Remove(filepath.Join(it2, "events.jsonl"))
	writeText(t, filepath.Join(it2, "executor.log"), "agent: iteration 2\n{\"status\": \"done\"}\n\x1b[1mbold\x1b[0m\n")
	if r := get(t, base); r.body != "agent: iteration 2\n{\"status\": \"done\"}\nbold\n" {
		t.Fatalf("command: %q", r.body)
	}

	// Claude's session, then Codex's ([agent] fallback); agent.json names
	// the last.
	writeJSONFile(t, filepath.Join(it2, iterdir.AgentFile), iterdir.Agent{Version: 1, Backend: "codex"})
	writeText(t, filepath.Join(it2, "executor.log"), readSession(t, "claude", "executor.log")+"[treeloop] fallback: codex\n"+codex)
	if r := get(t, base); r.body != sessionLogs[1].compact+"[treeloop] fallback: codex\n"+sessionLogs[0].compact {
		t.Fatalf("two sessions: %q", r.body)
	}
}

// The JSON the page reads carries no terminal escape sequence: a title an
// agent wrote with colours, an agent's message quoting a CLI's colours. A
// record without any is served byte for byte.
func TestJSONWithoutEscapes(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	plain, err := os.ReadFile(filepath.Join(dir, ".runner/state/tree.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r := get(t, s.url+"/api/tree"); r.body != string(plain) {
		t.Fatal("a tree without escapes is not served as it is on disk")
	}
	root := testTree("\x1b[1mBold\x1b[0m goal")
	root.Children[1].Waiting = "Which \x1b[31mone\x1b[0m?"
	if err := fsutil.WriteAtomic(filepath.Join(dir, ".runner/state/tree.json"), tree.Encode(root), 0o644); err != nil {
		t.Fatal(err)
	}
	r := get(t, s.url+"/api/tree")
	got, ps := tree.Load([]byte(r.body))
	if len(ps) > 0 || got.Title != "Bold goal" || got.Children[1].Waiting != "Which one?" || strings.Contains(r.body, `\u001b`) {
		t.Fatalf("tree: %s", r.body)
	}
	writeJSONFile(t, filepath.Join(dir, ".runner/iterations/run-a/0001", iterdir.AgentFile), map[string]any{
		"version": 1, "backend": "codex", "class": "api_error", "message": "\x1b[31merror:\x1b[0m 500 \u009b1mInternal", "usage": map[string]any{"input_tokens": 12},
	})
	r = get(t, s.url+"/api/iterations/run-a/1")
	rec := decode[struct {
		Agent struct {
			Message string         `json:"message"`
			Usage   map[string]int `json:"usage"`
		} `json:"agent"`
	}](t, r)
	if rec.Agent.Message != "error: 500 Internal" || rec.Agent.Usage["input_tokens"] != 12 || strings.Contains(r.body, `\u001b`) {
		t.Fatalf("iteration: %s", r.body)
	}
	if got := cleanJSON([]byte(`{"a": "\u00e9 \u0041", "b": [1.50, "x"]}`)); string(got) != `{"a": "\u00e9 \u0041", "b": [1.50, "x"]}` {
		t.Fatalf("a record without escapes changed: %s", got)
	}
	if got := cleanJSON([]byte(`{"b": [1.50, "\u001b[0mx"], "a": "\u009b"}`)); string(got) != `{"a":"","b":[1.50,"x"]}` {
		t.Fatalf("cleaned: %s", got)
	}
}
