package ui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// sessionLogs are real sessions' logs (testdata/sessions/BACKEND/): each
// agent CLI driven by the scripted model server as testscripts/agent-*.txtar
// drive them, writing a file with a shell command and answering; opening
// is how many of executor.log's lines the CLI prints before its first
// message or tool call, compact what the live tail shows of the session.
var sessionLogs = []struct {
	backend string
	opening int
	compact string
}{
	{"codex", 4, "codex: run: /bin/bash -lc \"echo 'hello from the scripted model' > hello.txt\" (exit 0)\n" +
		`codex: says: {"status": "done", "summary": "wrote hello.txt", "children": []}` + "\n"},
	{"claude", 1, "claude: tool Bash: echo 'hello from the scripted model' > hello.txt\n" +
		`claude: tool StructuredOutput: {"children":[],"status":"done","summary":"wrote hello.txt"}` + "\n"},
	{"opencode", 1, "opencode: tool bash: echo 'hello from the scripted model' > hello.txt\n" +
		`opencode: says: {"status": "done", "summary": "wrote hello.txt", "children": []}` + "\n"},
	{"gemini", 6, "Warning: 256-color support not detected. Using a terminal with at least 256-color support is recommended for a better visual experience.\n" +
		"YOLO mode is enabled. All tool calls will be automatically approved.\n" +
		"YOLO mode is enabled. All tool calls will be automatically approved.\n" +
		"Ripgrep is not available. Falling back to GrepTool.\n" +
		"gemini: says: First I write hello.txt.\n" +
		"gemini: tool run_shell_command: echo 'hello from the scripted model' > hello.txt\n" +
		`gemini: says: {"status": "done", "summary": "wrote hello.txt", "children": []}` + "\n" +
		"gemini: result: success\n"},
}

// readSession is one of sessionLogs' files.
func readSession(t *testing.T, backend, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "sessions", backend, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// The live tail of a running session shows the compact view of the CLI's
// events, as agent-exec prints it on a terminal, for every backend: from
// the first lines the CLI prints (when no message or tool call has come
// yet) to the end of the session, never a raw JSON event. Once the session
// has ended, the guard's log shows without its colour codes.
func TestBrowserLiveTailCompact(t *testing.T) {
	ciTier(t)
	for _, c := range sessionLogs {
		t.Run(c.backend, func(t *testing.T) {
			dir := fixture(t)
			it2 := filepath.Join(dir, ".runner/iterations/run-a/0002")
			log, events := readSession(t, c.backend, "executor.log"), readSession(t, c.backend, "events.jsonl")
			lines := strings.SplitAfter(log, "\n")
			opening := strings.Join(lines[:c.opening], "")
			writeText(t, filepath.Join(it2, "executor.log"), opening)
			writeText(t, filepath.Join(it2, "events.jsonl"), events[:strings.Index(events, "\n")+1])
			s := start(t, Options{Root: dir})
			ctx := tab(t)
			run(t, ctx, "open", chromedp.Navigate(s.url+"/"))
			waitJS(t, ctx, "live", `document.body.dataset.state === "live"`)
			tail := `document.querySelector("#live-tail")`
			waitJS(t, ctx, "the running session's tail", tail+`.dataset.iter === "run-a/2" && `+tail+`.dataset.file === "agent"`)
			noRaw := func(when string) {
				t.Helper()
				if text := eval[string](t, ctx, tail+`.textContent`); strings.Contains(text, `{"type"`) {
					t.Fatalf("%s: the live tail shows raw JSON events:\n%s", when, text)
				}
			}
			noRaw("before the first message")

			// The session goes on: the rest of its log is appended.
			f, err := os.OpenFile(filepath.Join(it2, "executor.log"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(log[len(opening):]); err != nil {
				t.Fatal(err)
			}
			f.Close()
			writeText(t, filepath.Join(it2, "events.jsonl"), events)
			waitJS(t, ctx, "the session in the compact view", tail+`.textContent === `+strconv.Quote(c.compact))
			noRaw("at the end of the session")

			// The session and its guard have ended: the guard's log, whose
			// colour codes stay on disk, shows as text.
			guard := "\x1b[1m============ test session starts ============\x1b[0m\ncollected 3 items\n\n" +
				"tests/test_x.py \x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m.\x1b[0m\x1b[32m [100%]\x1b[0m\n" +
				"\x1b[32m\x1b[1m3 passed\x1b[0m\x1b[32m in 0.01s\x1b[0m\n"
			writeText(t, filepath.Join(it2, "guard.log"), guard)
			writeJSONFile(t, filepath.Join(it2, "meta.json"), map[string]any{"version": 1, "run_id": "run-a", "iteration": 2, "node_id": "b", "status": "done", "result": "passed", "guard": "pass", "started_at": t0})
			want := "============ test session starts ============\ncollected 3 items\n\ntests/test_x.py ... [100%]\n3 passed in 0.01s\n"
			waitJS(t, ctx, "the guard's log as text", tail+`.dataset.file === "guard.log" && `+tail+`.textContent === `+strconv.Quote(want))
			if data, err := os.ReadFile(filepath.Join(it2, "guard.log")); err != nil || string(data) != guard {
				t.Fatalf("guard.log on disk changed: %q %v", data, err)
			}
		})
	}
}
