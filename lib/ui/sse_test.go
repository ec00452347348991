package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/tree"
)

// The stream announces each kind of change the runner makes, read as a
// browser would with bufio.
func TestEventsFromFiles(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	es := openSSE(t, s.url, "")
	hello := es.next(t, KindHello)
	if hello.id == "" {
		t.Fatal("hello has no id")
	}
	rn := filepath.Join(dir, ".runner")

	if err := fsutil.WriteAtomic(filepath.Join(rn, "state/tree.json"), tree.Encode(testTree("Changed")), 0o644); err != nil {
		t.Fatal(err)
	}
	es.next(t, KindTreeChanged)

	writeJSONFile(t, filepath.Join(rn, "state/run_state.json"), map[string]any{"run_id": "run-a", "next_iter": 4})
	es.next(t, KindRunStateChanged)

	it3 := filepath.Join(rn, "iterations/run-a/0003")
	if err := os.Mkdir(it3, 0o755); err != nil {
		t.Fatal(err)
	}
	if ev := es.next(t, KindIterationAdded); ev.data.ID != "run-a/0003" {
		t.Fatalf("iteration_added: %+v", ev)
	}
	writeJSONFile(t, filepath.Join(it3, "begin.json"), map[string]any{"node_id": "b"})
	if ev := es.next(t, KindIterationChanged); ev.data.ID != "run-a/0003" {
		t.Fatalf("iteration_changed: %+v", ev)
	}
	f, err := os.OpenFile(filepath.Join(it3, "executor.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("one line\n")
	if ev := es.next(t, KindLogAppended); ev.data.ID != "run-a/0003" || ev.data.File != "executor.log" {
		t.Fatalf("log_appended: %+v", ev)
	}

	writeText(t, filepath.Join(rn, "cancel"), "")
	es.next(t, KindRunStateChanged)

	rec := runrecord.Record{ID: "run-c", Branch: "runner/run-c", Status: runrecord.Running, StartedAt: t0, UpdatedAt: t0}
	if err := runrecord.Save(filepath.Join(rn, "runs/run-c.json"), rec); err != nil {
		t.Fatal(err)
	}
	if ev := es.next(t, KindRunsChanged); ev.data.ID != "run-c" {
		t.Fatalf("runs_changed: %+v", ev)
	}

	// A new run's directory: its first iteration is announced too.
	if err := os.MkdirAll(filepath.Join(rn, "iterations/run-d/0001"), 0o755); err != nil {
		t.Fatal(err)
	}
	if ev := es.next(t, KindIterationAdded); ev.data.ID != "run-d/0001" {
		t.Fatalf("iteration_added in a new run: %+v", ev)
	}
}

// A .runner created after the UI started (runner-init later) is picked up.
func TestEventsRunnerCreatedLater(t *testing.T) {
	dir := t.TempDir()
	s := start(t, Options{Root: dir})
	es := openSSE(t, s.url, "")
	es.next(t, KindHello)
	if err := os.MkdirAll(filepath.Join(dir, ".runner/state"), 0o755); err != nil {
		t.Fatal(err)
	}
	es.next(t, KindReset)
	// Watches settle asynchronously: rewrite until the change is seen.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if err := fsutil.WriteAtomic(filepath.Join(dir, ".runner/state/tree.json"), tree.Encode(testTree("New")), 0o644); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-es.evs:
			if ev.kind == KindTreeChanged {
				return
			}
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Fatal("no tree_changed after .runner appeared")
}

// Reconnecting with Last-Event-ID replays what was missed; an id the hub
// no longer has (or never had) gets a reset. A stream with nothing to
// send yet still answers at once: no heartbeat comes to flush it.
func TestEventsResume(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir, Heartbeat: time.Hour})
	es := openSSE(t, s.url, "")
	hello := es.next(t, KindHello)
	es.res.Body.Close()
	for i := range 3 {
		s.Hub().Publish(Event{Kind: KindIterationChanged, ID: "run-a/000" + strconv.Itoa(i+1)})
	}
	es2 := openSSE(t, s.url, hello.id)
	for i := range 3 {
		ev := es2.next(t, KindIterationChanged)
		if ev.data.ID != "run-a/000"+strconv.Itoa(i+1) {
			t.Fatalf("replay %d: %+v", i, ev)
		}
	}
	// Up to date: nothing replayed, no hello; the next live event arrives.
	last := strconv.FormatUint(s.Hub().Seq(), 10)
	es3 := openSSE(t, s.url, last)
	s.Hub().Publish(Event{Kind: KindTreeChanged})
	if ev := <-es3.evs; ev.kind != KindTreeChanged || ev.id != strconv.FormatUint(s.Hub().Seq(), 10) {
		t.Fatalf("first event after an up-to-date resume: %+v", ev)
	}
	for _, id := range []string{"1", "99999999999999999999", "junk", strconv.FormatUint(s.Hub().Seq()+5, 10)} {
		es := openSSE(t, s.url, id)
		if ev := <-es.evs; ev.kind != KindReset {
			t.Fatalf("Last-Event-ID %s: %+v, want reset", id, ev)
		}
	}
}

func TestHubRingOverflowResets(t *testing.T) {
	h := NewHub(4, 8)
	c, _, _ := h.Subscribe(0, false)
	first := h.Publish(Event{Kind: KindTreeChanged}).Seq
	for range 10 {
		h.Publish(Event{Kind: KindTreeChanged})
	}
	h.Unsubscribe(c)
	if _, _, reset := h.Subscribe(first, true); !reset {
		t.Fatal("an id older than the ring must reset")
	}
	_, replay, reset := h.Subscribe(h.Seq()-2, true)
	if reset || len(replay) != 2 {
		t.Fatalf("resume inside the ring: reset=%v replay=%d", reset, len(replay))
	}
}

// A client that stops reading is dropped when its buffer fills; the others
// get every event and Publish never blocks.
func TestHubDropsSlowClient(t *testing.T) {
	h := NewHub(16, 4)
	slow, _, _ := h.Subscribe(0, false)
	fast, _, _ := h.Subscribe(0, false)
	var got []Event
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ev := range fast.C {
			got = append(got, ev)
		}
	}()
	done := make(chan struct{})
	go func() {
		for i := range 100 {
			h.Publish(Event{Kind: KindLogAppended, ID: strconv.Itoa(i)})
			time.Sleep(100 * time.Microsecond)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Publish blocked on a client that does not read")
	}
	if h.Dropped() != 1 || h.Clients() != 1 {
		t.Fatalf("dropped %d, clients %d", h.Dropped(), h.Clients())
	}
	n := 0
	for range slow.C {
		n++
	}
	if n != 4 {
		t.Fatalf("the slow client's channel held %d events, then closed; want its buffer, 4", n)
	}
	h.Close()
	wg.Wait()
	if len(got) != 100 {
		t.Fatalf("the reading client got %d of 100 events", len(got))
	}
}

// A stalled HTTP client does not hold up another stream: once its socket
// and its channel are full it is dropped, while a reading client gets
// every event.
func TestEventsSlowClientDoesNotBlockOthers(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	stalled := openSSE(t, s.url, "")
	stalled.next(t, KindHello) // then never read again
	stalled.stop()
	es := openSSE(t, s.url, "")
	es.next(t, KindHello)
	pad := strings.Repeat("p", 4096)
	sent := 0
	for s.Hub().Dropped() == 0 && sent < 40000 {
		for range 32 {
			s.Hub().Publish(Event{Kind: KindLogAppended, ID: "run-a/0001", File: pad + strconv.Itoa(sent)})
			sent++
		}
		for i := sent - 32; i < sent; i++ {
			if ev := es.next(t, KindLogAppended); ev.data.File != pad+strconv.Itoa(i) {
				t.Fatalf("event %d: %.20q", i, ev.data.File)
			}
		}
	}
	if s.Hub().Dropped() != 1 || s.Hub().Clients() != 1 {
		t.Fatalf("after %d events: dropped %d, clients %d", sent, s.Hub().Dropped(), s.Hub().Clients())
	}
	t.Logf("the stalled client was dropped after %d events of 4 KiB", sent)
}

func TestEventsClosedOnShutdown(t *testing.T) {
	dir := fixture(t)
	srv := start(t, Options{Root: dir})
	es := openSSE(t, srv.url, "")
	es.next(t, KindHello)
	srv.Hub().Close()
	select {
	case _, ok := <-es.evs:
		for ok {
			_, ok = <-es.evs
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream stayed open after the hub closed")
	}
}

// fakeClock runs AfterFunc callbacks when Advance passes their time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at      time.Time
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool { was := !t.stopped; t.stopped = true; return was }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		if !t.stopped && !t.at.After(c.now) {
			due = append(due, t)
		} else if !t.stopped {
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, t := range due {
		t.stopped = true
		t.f()
	}
}

func TestDebounceTrailingEdge(t *testing.T) {
	clk := &fakeClock{now: t0}
	var flushed [][]Event
	d := newDebouncer(clk, 100*time.Millisecond, 250*time.Millisecond, func(evs []Event) { flushed = append(flushed, evs) })
	d.add(Event{Kind: KindTreeChanged})
	clk.Advance(60 * time.Millisecond)
	d.add(Event{Kind: KindTreeChanged})
	d.add(Event{Kind: KindRunStateChanged})
	clk.Advance(99 * time.Millisecond)
	if len(flushed) != 0 {
		t.Fatalf("flushed before 100 ms of quiet: %v", flushed)
	}
	clk.Advance(1 * time.Millisecond)
	if len(flushed) != 1 || len(flushed[0]) != 2 || flushed[0][0].Kind != KindTreeChanged || flushed[0][1].Kind != KindRunStateChanged {
		t.Fatalf("one flush of the two distinct events, in order: %v", flushed)
	}
	clk.Advance(time.Second)
	if len(flushed) != 1 {
		t.Fatalf("a flush without changes: %v", flushed)
	}
}

func TestDebounceMaxDelay(t *testing.T) {
	clk := &fakeClock{now: t0}
	var at []time.Duration
	d := newDebouncer(clk, 100*time.Millisecond, 250*time.Millisecond, func([]Event) { at = append(at, clk.now.Sub(t0)) })
	// A log written every 50 ms never goes quiet for 100 ms.
	for range 20 {
		d.add(Event{Kind: KindLogAppended, ID: "r/1", File: "executor.log"})
		clk.Advance(50 * time.Millisecond)
	}
	if len(at) < 3 || at[0] != 250*time.Millisecond {
		t.Fatalf("flushes at %v: want the first at 250 ms and more after", at)
	}
	for i := 1; i < len(at); i++ {
		if at[i]-at[i-1] > 300*time.Millisecond {
			t.Fatalf("flushes %v apart under a continuous stream", at[i]-at[i-1])
		}
	}
	d.stop()
	d.add(Event{Kind: KindTreeChanged})
	n := len(at)
	clk.Advance(time.Second)
	if len(at) != n {
		t.Fatal("a stopped debouncer flushed")
	}
}

// TestWatchQuiet: watching a well-formed .runner reports no problem
// through Logf: it is for watches that fail.
func TestWatchQuiet(t *testing.T) {
	dir := fixture(t)
	var mu sync.Mutex
	var logged []string
	s := start(t, Options{Root: dir, Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(f, a...))
	}})
	es := openSSE(t, s.url, "")
	es.next(t, KindHello)
	if err := os.Mkdir(filepath.Join(dir, ".runner/iterations/run-a/0003"), 0o755); err != nil {
		t.Fatal(err)
	}
	es.next(t, KindIterationAdded)
	mu.Lock()
	defer mu.Unlock()
	if len(logged) > 0 {
		t.Fatalf("problems reported: %q", logged)
	}
}

// TestLastFinishedIterationWatched: a run's last iteration stays watched
// after its meta.json is written (a finished run's last iteration).
func TestLastFinishedIterationWatched(t *testing.T) {
	dir := fixture(t)
	rn := filepath.Join(dir, ".runner")
	for _, n := range []string{"0001", "0002"} {
		writeJSONFile(t, filepath.Join(rn, "iterations/run-b", n, "meta.json"), map[string]any{"status": "done"})
		writeText(t, filepath.Join(rn, "iterations/run-b", n, "guard.log"), "ok\n")
	}
	s := start(t, Options{Root: dir})
	es := openSSE(t, s.url, "")
	es.next(t, KindHello)
	f, err := os.OpenFile(filepath.Join(rn, "iterations/run-b/0002/guard.log"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	f.Close()
	if ev := es.next(t, KindLogAppended); ev.data.ID != "run-b/0002" || ev.data.File != "guard.log" {
		t.Fatalf("log_appended: %+v", ev.data)
	}
}
