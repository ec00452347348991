package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/tree"
)

// testTree is a small valid tree: root decomposed into a (passed) and b.
func testTree(title string) *tree.Node {
	leaf := func(id string, order int64, passes bool) *tree.Node {
		return &tree.Node{ID: id, Order: order, Title: "Leaf " + id, Goal: "Do " + id, Acceptance: []string{id + " works"},
			Next: tree.NextExecute, Passes: passes, Attempts: 1, MaxAttempts: 3, Children: []*tree.Node{}}
	}
	return &tree.Node{ID: "root", Title: title, Goal: "The goal", Acceptance: []string{}, Next: tree.NextDecompose,
		MaxAttempts: 3, Children: []*tree.Node{leaf("a", 1, true), leaf("b", 2, false)}}
}

// writeJSONFile writes v atomically as the runner does.
func writeJSONFile(t testing.TB, path string, v any) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteAtomic(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeText(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixture is a repository with a run "run-a": iteration 1 finished
// (guard passed, tokens and cost), iteration 2 running; a run record.
func fixture(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	rn := filepath.Join(dir, ".runner")
	if err := os.MkdirAll(filepath.Join(rn, "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fsutil.WriteAtomic(filepath.Join(rn, "state", "tree.json"), tree.Encode(testTree("Fixture goal")), 0o644); err != nil {
		t.Fatal(err)
	}
	run := "run-a"
	writeJSONFile(t, filepath.Join(rn, "state", "run_state.json"), map[string]any{
		"run_id": run, "next_iter": 3, "last_status": "done", "last_summary": "ok", "last_guard": "pass", "last_iter": 1, "last_node": "a",
	})
	it1 := filepath.Join(rn, "iterations", run, "0001")
	begin := iterdir.Begin{Version: 1, RunID: run, Iteration: 1, NodeID: "a", NodePath: "root/a", Mode: "execute", Attempts: 0, MaxAttempts: 3, StartedAt: t0, Deadline: t0.Add(time.Hour)}
	writeJSONFile(t, filepath.Join(it1, "begin.json"), begin)
	ag := &iterdir.Agent{Version: 1, Backend: "claude", Class: "ok", Status: "done", AgentErrors: []string{}, Usage: iterdir.Usage{InputTokens: 1200, OutputTokens: 300, CachedTokens: 50, CostUSD: 0.25}}
	writeJSONFile(t, filepath.Join(it1, "agent.json"), ag)
	writeJSONFile(t, filepath.Join(it1, "meta.json"), iterdir.Meta{
		Version: 1, RunID: run, Iteration: 1, NodeID: "a", NodePath: "root/a", Mode: "execute", Status: "done", Result: "passed",
		Guard: "pass", Reasons: []string{}, AttemptsBefore: 0, AttemptsAfter: 1, MaxAttempts: 3, Passes: true,
		StartedAt: t0, EndedAt: t0.Add(90 * time.Second), DurationMS: 90000, Agent: ag, Commit: strings.Repeat("c", 40),
	})
	writeJSONFile(t, filepath.Join(it1, "output.json"), map[string]any{"status": "done", "summary": "did a", "children": []any{}})
	writeText(t, filepath.Join(it1, "guard.log"), "line 1\nline 2\nline 3\nguard ok\n")
	writeJSONFile(t, filepath.Join(it1, "guard.json"), iterdir.Guard{Version: 1, Argv: []string{"just", "ci"}, Outcome: "pass", DurationMS: 1500,
		Evidence: &iterdir.Evidence{Level: "witness", LevelFrom: "config", Reads: "witnessed", Sources: []string{"pytest.xml"}, Passed: 3, Skipped: 1, PassToPass: 2,
			Witness: &iterdir.Witness{Files: []string{"tests/test_a.py"}, Tests: []string{"tests.test_a::test_new"}}, Held: true}})
	writeText(t, filepath.Join(it1, "executor.log"), "agent says hi\n")
	writeText(t, filepath.Join(it1, "prompt.md"), "# Prompt\n")
	writeText(t, filepath.Join(it1, "diff.patch"), "diff --git a/x b/x\n+added\n-removed\n")
	writeText(t, filepath.Join(it1, "events.jsonl"),
		`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash","input":{"command":"make test"}}]}}`+"\n"+
			`{"type":"assistant","message":{"content":[{"type":"text","text":"All done."}]}}`+"\n")
	it2 := filepath.Join(rn, "iterations", run, "0002")
	b2 := begin
	b2.Iteration, b2.NodeID, b2.NodePath, b2.StartedAt = 2, "b", "root/b", t0.Add(2*time.Minute)
	writeJSONFile(t, filepath.Join(it2, "begin.json"), b2)
	writeText(t, filepath.Join(it2, "executor.log"), "working on b\n")
	// A directory set aside by a recovery and one not yet begun are not iterations.
	writeText(t, filepath.Join(rn, "iterations", run, "0003.discarded", "begin.json"), "{}")
	if err := os.MkdirAll(filepath.Join(rn, "iterations", run, "0009"), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := runrecord.Record{
		ID: run, RunID: run, Branch: "runner/" + run, GoalTitle: "Fixture goal", Status: runrecord.Complete, Reason: "complete",
		StartedAt: t0, UpdatedAt: t0.Add(time.Hour), Iterations: 1,
		Nodes: runrecord.Nodes{Total: 3, Passed: 3}, Usage: runrecord.Usage{InputTokens: 1200, OutputTokens: 300, CostUSD: 0.25},
	}
	fin := t0.Add(time.Hour)
	rec.FinishedAt = &fin
	if err := runrecord.Save(filepath.Join(rn, "runs", run+".json"), rec); err != nil {
		t.Fatal(err)
	}
	return dir
}

// server is a running Server on 127.0.0.1:0.
type server struct {
	*Server
	url string
}

func start(t testing.TB, opts Options) server {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return server{s, "http://" + ln.Addr().String()}
}

// client is the tests' HTTP client: a server that never answers a
// request (a handler that loops, a stream whose headers never come) fails
// the test rather than hanging it.
var client = func() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: tr}
}()

type response struct {
	code   int
	body   string
	header http.Header
}

func get(t testing.TB, url string, hdr ...string) response {
	t.Helper()
	return do(t, "GET", url, nil, hdr...)
}

func do(t testing.TB, method, url string, body io.Reader, hdr ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Host") {
			req.Host = hdr[i+1]
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, string(data), res.Header}
}

// signIn exchanges a server's one-time login token (GET /login?token=) for
// its session cookie, as the operator's browser does when it opens the link
// runner-ui printed, and returns the Cookie header that carries it.
func signIn(t testing.TB, url, token string) string {
	t.Helper()
	noRedirect := &http.Client{Timeout: client.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Get(url + "/login?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookies := res.Cookies()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" || len(cookies) != 1 {
		t.Fatalf("sign-in: %d, Location %q, cookies %v", res.StatusCode, res.Header.Get("Location"), cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" || !strings.HasPrefix(c.Name, "treeloop-ui-") || len(c.Value) != 32 {
		t.Fatalf("session cookie: %s", res.Header.Get("Set-Cookie"))
	}
	return c.Name + "=" + c.Value
}

// wantError checks an error answer: status and {"error": code}.
func wantError(t testing.TB, r response, code int, kind string) {
	t.Helper()
	var e apiError
	if r.code != code || json.Unmarshal([]byte(r.body), &e) != nil || e.Error != kind || e.Message == "" {
		t.Fatalf("got %d %s, want %d {error: %s}", r.code, r.body, code, kind)
	}
}

func decode[T any](t testing.TB, r response) T {
	t.Helper()
	var v T
	if r.code != 200 {
		t.Fatalf("status %d: %s", r.code, r.body)
	}
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return v
}

// sse is an /events stream read with bufio.
type sse struct {
	res   *http.Response
	rd    *bufio.Reader
	evs   chan sseEvent
	pause chan struct{}
}

// stop makes the reader stop reading (the connection stays open).
func (s *sse) stop() { close(s.pause) }

type sseEvent struct {
	id, kind string
	data     Event
}

func openSSE(t testing.TB, url, lastID string) *sse {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/events", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("/events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &sse{res: res, rd: bufio.NewReader(res.Body), evs: make(chan sseEvent, 100), pause: make(chan struct{})}
	go func() {
		defer close(s.evs)
		var ev sseEvent
		for {
			select {
			case <-s.pause:
				return
			default:
			}
			line, err := s.rd.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.kind != "" {
					s.evs <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.kind = line[7:]
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(line[6:]), &ev.data)
			}
		}
	}()
	t.Cleanup(func() { res.Body.Close() })
	return s
}

// next waits for the next event matching kind (others are skipped).
func (s *sse) next(t testing.TB, kind string) sseEvent {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-s.evs:
			if !ok {
				t.Fatalf("stream ended waiting for %s", kind)
			}
			if ev.kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event", kind)
		}
	}
}
