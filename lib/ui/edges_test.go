package ui

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
)

// TestReadAllLimits: a file of exactly the limit is read whole, one byte
// more is refused, whether the size stat gave is right or stale (the
// file grew after it).
func TestReadAllLimits(t *testing.T) {
	for _, c := range []struct {
		data     string
		statSize int64
		limit    int64
		tooLarge bool
		name     string
	}{
		{"12345", 5, 5, false, "at the limit"},
		{"123456", 6, 5, true, "over the limit"},
		{"12345", 0, 5, false, "grown to the limit"},
		{"123456", 0, 5, true, "grown over the limit"},
		{"", 0, 0, false, "empty"},
	} {
		got, err := readAll(strings.NewReader(c.data), c.statSize, c.limit)
		if c.tooLarge != errors.Is(err, errTooLarge) || !c.tooLarge && (err != nil || string(got) != c.data) {
			t.Errorf("%s: %q %v", c.name, got, err)
		}
	}
}

// TestTailLinesEdges: no lines asked, a byte budget that ends inside a
// later chunk, and one larger than the file.
func TestTailLinesEdges(t *testing.T) {
	if got, start, err := tailLines(strings.NewReader("a\nb\n"), 4, 0, 100); err != nil || len(got) != 0 || start != 4 {
		t.Errorf("0 lines: %q %d %v", got, start, err)
	}
	// 70 KiB of short lines: the budget of 66 KiB ends in the second chunk
	// read back from the end.
	var b strings.Builder
	for b.Len() < 70<<10 {
		b.WriteString("0123456789abcde\n")
	}
	text := b.String()
	got, start, err := tailLines(strings.NewReader(text), int64(len(text)), 1<<20, 66<<10)
	if err != nil || len(got) != 66<<10 || start != int64(len(text)-66<<10) || string(got) != text[start:] {
		t.Errorf("budget across chunks: %d bytes from %d (%v)", len(got), start, err)
	}
	// A budget larger than the file: two chunks read, the whole file.
	text = strings.Repeat("0123456789abcde\n", 90<<10/16)
	got, start, err = tailLines(strings.NewReader(text), int64(len(text)), 1<<20, 100<<10)
	if err != nil || start != 0 || string(got) != text {
		t.Errorf("a budget over the file: %d bytes from %d (%v)", len(got), start, err)
	}
}

// TestCompactEdges: the compact view of an events.jsonl larger than it
// renders starts at a whole line, ends a last line without a newline,
// and takes a tail; of an empty one it is empty.
func TestCompactEdges(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	events := filepath.Join(dir, ".runner/iterations/run-a/0001/events.jsonl")
	say := func(text string) string {
		return `{"type":"assistant","message":{"content":[{"type":"text","text":"` + text + `"}]}}`
	}
	var b bytes.Buffer
	for i := 0; b.Len() < maxEvents+(64<<10); i++ {
		b.WriteString(say("early") + "\n")
	}
	b.WriteString(say("next to last") + "\n" + say("last, unended"))
	writeText(t, events, b.String())
	base := s.url + "/api/iterations/run-a/1/events.jsonl?view=compact"
	r := get(t, base)
	lines := strings.Split(r.body, "\n")
	if r.code != 200 || !strings.HasSuffix(r.body, "claude: says: next to last\nclaude: says: last, unended\n") || lines[0] != "claude: says: early" {
		t.Fatalf("compact view: %d, starts %q, ends %q", r.code, lines[0], r.body[max(0, len(r.body)-80):])
	}
	if r := get(t, base+"&tail=2"); r.body != "claude: says: next to last\nclaude: says: last, unended\n" {
		t.Fatalf("tail=2: %q", r.body)
	}
	if r := get(t, base+"&tail=0"); r.code != 200 || r.body != "" {
		t.Fatalf("tail=0: %d %q", r.code, r.body)
	}
	// A session that has printed nothing yet.
	writeText(t, events, "")
	if r := get(t, base); r.code != 200 || r.body != "" {
		t.Fatalf("an empty events.jsonl: %d %q", r.code, r.body)
	}
}

// TestIterationsOrder: a run's running iteration is its highest number,
// 10000 after 9999 though it sorts first by name; its tokens come from
// agent.json before meta.json exists. Across runs, iterations are in the
// order they started.
func TestIterationsOrder(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	rn := filepath.Join(dir, ".runner")
	for _, n := range []string{"0002", "0003.discarded", "0009"} {
		if err := os.RemoveAll(filepath.Join(rn, "iterations", "run-a", n)); err != nil {
			t.Fatal(err)
		}
	}
	late := t0.Add(10 * time.Minute)
	for _, it := range []struct {
		run, name string
		n         int
		meta      bool
		at        time.Time
	}{
		{"run-a", "9999", 9999, true, late},
		{"run-a", "10000", 10000, false, late.Add(time.Minute)},
		{"run-b", "0001", 1, true, t0.Add(-time.Hour)},
	} {
		d := filepath.Join(rn, "iterations", it.run, it.name)
		b := iterdir.Begin{Version: 1, RunID: it.run, Iteration: it.n, NodeID: "n", Mode: "execute", MaxAttempts: 3, StartedAt: it.at}
		writeJSONFile(t, filepath.Join(d, "begin.json"), b)
		ag := iterdir.Agent{Version: 1, Backend: "claude", Class: "ok", AgentErrors: []string{}, Usage: iterdir.Usage{InputTokens: 70, OutputTokens: 8, CachedTokens: 900, CostUSD: 0.5}}
		writeJSONFile(t, filepath.Join(d, "agent.json"), ag)
		if it.meta {
			writeJSONFile(t, filepath.Join(d, "meta.json"), iterdir.Meta{Version: 1, RunID: it.run, Iteration: it.n, NodeID: "n", Status: "retry", StartedAt: it.at, Agent: &ag})
		}
	}
	list := decode[Iterations](t, get(t, s.url+"/api/iterations")).Iterations
	var got []string
	for _, it := range list {
		got = append(got, it.Run+"/"+strconv.Itoa(it.Iter)+":"+it.Status)
	}
	if want := "run-b/1:retry run-a/1:done run-a/9999:retry run-a/10000:running"; strings.Join(got, " ") != want {
		t.Fatalf("iterations: %s\nwant %s", strings.Join(got, " "), want)
	}
	last := list[len(list)-1]
	if !last.Running || last.Tokens != (Tokens{70, 8, 900}) || last.CostUSD != 0.5 {
		t.Errorf("the running iteration: %+v", last)
	}
	rs := decode[RunState](t, get(t, s.url+"/api/run-state"))
	if rs.Running == nil || rs.Running.Iter != 10000 {
		t.Errorf("run-state's running iteration: %+v", rs.Running)
	}
}

// TestIterationsSameStart: iterations that started at the same instant
// are in the order of their run's id, then of their number: run-b's
// iteration 20000 before run-c's 9999 and 10000 (which its name lists
// first).
func TestIterationsSameStart(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	rn := filepath.Join(dir, ".runner")
	if err := os.RemoveAll(filepath.Join(rn, "iterations", "run-a")); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Hour)
	for _, it := range []struct {
		run, name string
		n         int
	}{{"run-c", "10000", 10000}, {"run-c", "9999", 9999}, {"run-b", "20000", 20000}} {
		d := filepath.Join(rn, "iterations", it.run, it.name)
		writeJSONFile(t, filepath.Join(d, "begin.json"), iterdir.Begin{Version: 1, RunID: it.run, Iteration: it.n, NodeID: "n", Mode: "execute", MaxAttempts: 3, StartedAt: at})
		writeJSONFile(t, filepath.Join(d, "meta.json"), iterdir.Meta{Version: 1, RunID: it.run, Iteration: it.n, NodeID: "n", Status: "retry", StartedAt: at})
	}
	var got []string
	for _, it := range decode[Iterations](t, get(t, s.url+"/api/iterations")).Iterations {
		got = append(got, it.Run+"/"+strconv.Itoa(it.Iter))
	}
	if want := "run-b/20000 run-c/9999 run-c/10000"; strings.Join(got, " ") != want {
		t.Fatalf("iterations: %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestRunStateWithoutIterations: a run that has begun no iteration has
// none running.
func TestRunStateWithoutIterations(t *testing.T) {
	dir := fixture(t)
	if err := os.RemoveAll(filepath.Join(dir, ".runner", "iterations")); err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Root: dir})
	r := get(t, s.url+"/api/run-state")
	if rs := decode[RunState](t, r); r.code != 200 || rs.Running != nil || !strings.Contains(string(rs.RunState), `"run-a"`) {
		t.Fatalf("run-state: %d %s", r.code, r.body)
	}
}

// TestHubResumeEdges: an id just before the ring's oldest event replays
// the whole ring; a fresh hub resets any id; an id of an earlier hub
// resets even when the numbers could meet.
func TestHubResumeEdges(t *testing.T) {
	h := NewHub(4, 8)
	if _, replay, reset := h.Subscribe(h.Seq()-1, true); !reset || replay != nil {
		t.Fatalf("a fresh hub: reset=%v replay=%d", reset, len(replay))
	}
	for range 10 {
		h.Publish(Event{Kind: KindTreeChanged})
	}
	oldest := h.Seq() - 4
	if _, replay, reset := h.Subscribe(oldest, true); reset || len(replay) != 4 {
		t.Fatalf("resume just before the ring: reset=%v replay=%d", reset, len(replay))
	}
	if _, _, reset := h.Subscribe(oldest-1, true); !reset {
		t.Fatal("an id one before that must reset")
	}
	if _, _, reset := h.Subscribe(h.Seq()+1, true); !reset {
		t.Fatal("an id from the future must reset")
	}
	earlier := NewHub(4, 8)
	id := earlier.Publish(Event{Kind: KindTreeChanged}).Seq
	for ms := time.Now().UnixMilli(); time.Now().UnixMilli() == ms; {
		time.Sleep(100 * time.Microsecond) // the clock's next millisecond
	}
	later := NewHub(4, 8)
	later.Publish(Event{Kind: KindTreeChanged})
	if _, _, reset := later.Subscribe(id, true); !reset {
		t.Fatal("an id of an earlier hub did not reset")
	}
}

// TestNewDefaults: the debounce, its bound, the heartbeat and the log a
// server takes when not given, and a bound never below the debounce.
func TestNewDefaults(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		in, want [3]time.Duration // debounce, max delay, heartbeat
	}{
		{[3]time.Duration{}, [3]time.Duration{100 * ms, 250 * ms, 15 * time.Second}},
		{[3]time.Duration{-ms, -ms, -ms}, [3]time.Duration{100 * ms, 250 * ms, 15 * time.Second}},
		{[3]time.Duration{300 * ms, 0, time.Second}, [3]time.Duration{300 * ms, 300 * ms, time.Second}},
		{[3]time.Duration{50 * ms, 50 * ms, 0}, [3]time.Duration{50 * ms, 50 * ms, 15 * time.Second}},
		{[3]time.Duration{50 * ms, 10 * ms, 0}, [3]time.Duration{50 * ms, 250 * ms, 15 * time.Second}},
		{[3]time.Duration{ms, 900 * ms, ms}, [3]time.Duration{ms, 900 * ms, ms}},
	} {
		s, err := New(Options{Root: t.TempDir(), NoAssets: true, Debounce: c.in[0], MaxDelay: c.in[1], Heartbeat: c.in[2]})
		if err != nil {
			t.Fatal(err)
		}
		if got := [3]time.Duration{s.opts.Debounce, s.opts.MaxDelay, s.opts.Heartbeat}; got != c.want {
			t.Errorf("New(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if _, err := New(Options{Root: "relative"}); err == nil {
		t.Error("a relative root was taken")
	}
	// Logf: the one given is kept; without one, reports are discarded.
	var logged []string
	s, err := New(Options{Root: t.TempDir(), NoAssets: true, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	s.opts.Logf("watch %s: %v", "x", "gone")
	if len(logged) != 1 || logged[0] != "watch x: gone" {
		t.Errorf("the Logf given was not kept: %q", logged)
	}
	if s, err = New(Options{Root: t.TempDir(), NoAssets: true}); err != nil || s.opts.Logf == nil {
		t.Fatalf("no default Logf: %v", err)
	}
	s.opts.Logf("discarded %d", 1)
}

// TestTreeNeverSettles: a tree.json that is never valid JSON (a writer
// that left it half written) is a 503 tree_unreadable after a bounded
// number of retries, not a request that retries for ever.
func TestTreeNeverSettles(t *testing.T) {
	dir := fixture(t)
	writeText(t, filepath.Join(dir, ".runner/state/tree.json"), `{"id": "root", "title": "half`)
	s := start(t, Options{Root: dir})
	wantError(t, get(t, s.url+"/api/tree"), 503, "tree_unreadable")
}

// TestTreeCache: a tree.json whose stat (size, mtime, inode) has not
// changed since the last whole read is served from memory: bytes changed
// in place under the same stat are not read again.
func TestTreeCache(t *testing.T) {
	dir := fixture(t)
	path := filepath.Join(dir, ".runner/state/tree.json")
	first := tree.Encode(testTree("Cached"))
	if err := os.WriteFile(path, first, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Root: dir})
	if r := get(t, s.url+"/api/tree"); r.code != 200 || r.body != string(first) {
		t.Fatalf("first read: %d %q", r.code, r.body)
	}
	same := tree.Encode(testTree("Hidden"))
	if len(same) != len(first) {
		t.Fatalf("the two trees differ in size: %d, %d", len(first), len(same))
	}
	if err := os.WriteFile(path, same, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if r := get(t, s.url+"/api/tree"); r.code != 200 || r.body != string(first) {
		t.Fatalf("an unchanged stat read the file again: %d %q", r.code, r.body)
	}
	// The stat moves: the file is read again.
	later := st.ModTime().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if r := get(t, s.url+"/api/tree"); r.code != 200 || r.body != string(same) {
		t.Fatalf("a new mtime served the cached tree: %d %q", r.code, r.body)
	}
}

// TestRunStateUnreadable: a run_state.json that is not JSON is a 503,
// one that is not a regular file is refused; neither is served as a run
// state.
func TestRunStateUnreadable(t *testing.T) {
	dir := fixture(t)
	path := filepath.Join(dir, ".runner/state/run_state.json")
	s := start(t, Options{Root: dir})
	writeText(t, path, `{"run_id": "run-a", `)
	wantError(t, get(t, s.url+"/api/run-state"), 503, "run_state_unreadable")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	wantError(t, get(t, s.url+"/api/run-state"), 403, "refused")
}

// TestFileErrorKinds: a record larger than its read limit is 413
// too_large; a path through a regular file is 500 io, naming the cause
// without the absolute path.
func TestFileErrorKinds(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	// Sparse: the size is over the 4 MiB limit, no byte is written.
	big := filepath.Join(dir, ".runner/runs/run-big.json")
	writeText(t, big, "")
	if err := os.Truncate(big, 4<<20+1); err != nil {
		t.Fatal(err)
	}
	wantError(t, get(t, s.url+"/api/runs/run-big"), 413, "too_large")
	// A run directory that is a regular file: nothing is under it.
	writeText(t, filepath.Join(dir, ".runner/iterations/run-b"), "not a directory\n")
	r := get(t, s.url+"/api/iterations/run-b/1/guard.log")
	wantError(t, r, 500, "io")
	if !strings.Contains(r.body, "not a directory") || strings.Contains(r.body, dir) {
		t.Fatalf("a path through a file: %s", r.body)
	}
}

// TestIterCache: an iteration's summary is kept while its meta.json's
// size and mtime stay the same, and read again once either moves.
func TestIterCache(t *testing.T) {
	dir := fixture(t)
	meta := filepath.Join(dir, ".runner/iterations/run-a/0001/meta.json")
	data, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(meta)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Root: dir})
	status := func() string {
		t.Helper()
		for _, it := range decode[Iterations](t, get(t, s.url+"/api/iterations")).Iterations {
			if it.Iter == 1 {
				return it.Status
			}
		}
		t.Fatal("iteration 1 not listed")
		return ""
	}
	if got := status(); got != "done" {
		t.Fatalf("iteration 1: %s", got)
	}
	// The same size and mtime, other bytes: the cached summary stands.
	other := bytes.Replace(data, []byte(`"status": "done"`), []byte(`"status": "drop"`), 1)
	if bytes.Equal(other, data) {
		t.Fatal("meta.json has no done status to replace")
	}
	if err := os.WriteFile(meta, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(meta, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "done" {
		t.Fatalf("an unchanged meta.json was read again: %s", got)
	}
	later := st.ModTime().Add(time.Second)
	if err := os.Chtimes(meta, later, later); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "drop" {
		t.Fatalf("a meta.json with a new mtime: %s", got)
	}
	// A new size under the same mtime is read again too.
	gone := append(bytes.Replace(other, []byte(`"status": "drop"`), []byte(`"status": "gone"`), 1), '\n')
	if err := os.WriteFile(meta, gone, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(meta, later, later); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "gone" {
		t.Fatalf("a meta.json of a new size: %s", got)
	}
}

// TestIterCachePruned: a listing drops the cached summaries of the
// iterations it no longer finds, and a listing of one run keeps the
// other runs' summaries.
func TestIterCachePruned(t *testing.T) {
	dir := fixture(t)
	rn := filepath.Join(dir, ".runner")
	writeJSONFile(t, filepath.Join(rn, "iterations/run-b/0001/meta.json"), iterdir.Meta{Version: 1, RunID: "run-b", Iteration: 1, NodeID: "a", Status: "done", StartedAt: t0})
	s := start(t, Options{Root: dir})
	cached := func() string {
		s.iters.mu.Lock()
		defer s.iters.mu.Unlock()
		keys := make([]string, 0, len(s.iters.m))
		for k := range s.iters.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return strings.Join(keys, " ")
	}
	decode[Iterations](t, get(t, s.url+"/api/iterations"))
	if got := cached(); got != "run-a/0001 run-b/0001" {
		t.Fatalf("cached after a listing: %q", got)
	}
	decode[Iterations](t, get(t, s.url+"/api/iterations?run=run-b"))
	if got := cached(); got != "run-a/0001 run-b/0001" {
		t.Fatalf("cached after a listing of run-b: %q", got)
	}
	if err := os.RemoveAll(filepath.Join(rn, "iterations/run-a/0001")); err != nil {
		t.Fatal(err)
	}
	decode[Iterations](t, get(t, s.url+"/api/iterations?run=run-b"))
	if got := cached(); got != "run-a/0001 run-b/0001" {
		t.Fatalf("a listing of run-b pruned run-a: %q", got)
	}
	decode[Iterations](t, get(t, s.url+"/api/iterations"))
	if got := cached(); got != "run-b/0001" {
		t.Fatalf("cached after run-a/0001 was removed: %q", got)
	}
}
