package ui

import (
	"fmt"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The event kinds (seed 000 §14.5, plus what the views need). Events say
// what changed; the REST API carries the data, so dropping or merging
// events is always safe.
const (
	KindHello            = "hello"             // first event of every stream
	KindReset            = "reset"             // refetch everything (unknown Last-Event-ID, a watcher overflow)
	KindTreeChanged      = "tree_changed"      // state/tree.json
	KindRunStateChanged  = "run_state_changed" // state/run_state.json, the cancel file
	KindIterationAdded   = "iteration_added"   // a new iteration directory; id run/iter
	KindIterationChanged = "iteration_changed" // a record of it (meta.json, agent.json …); id run/iter
	KindLogAppended      = "log_appended"      // executor.log, guard.log, events.jsonl; id run/iter, file
	KindRunsChanged      = "runs_changed"      // a run record; id the run
)

// Event is one change.
type Event struct {
	Seq  uint64 `json:"-"`
	Kind string `json:"kind"`
	ID   string `json:"id,omitempty"`
	File string `json:"file,omitempty"`
}

const (
	ringSize     = 512 // events kept for Last-Event-ID
	clientBuffer = 64  // events a client may lag behind before it is dropped
)

// Hub fans events out to SSE clients. Each client has a small buffered
// channel; a client whose channel is full is dropped (its stream ends and
// the browser reconnects with Last-Event-ID), never waited for.
type Hub struct {
	mu      sync.Mutex
	seq     uint64
	base    uint64 // the first seq of this hub: ids from before it are unknown
	ring    []Event
	clients map[*Client]struct{}
	closed  bool
	bufSize int
	dropped uint64
}

// Client is one subscriber. C is closed when the client is dropped or the
// hub closes.
type Client struct {
	C chan Event
}

// NewHub makes a hub keeping ring events for replay. Sequence numbers start
// from the clock (milliseconds × 1000), so an id from an earlier server is
// always older than this hub's and gets a reset.
func NewHub(ring, buf int) *Hub {
	base := uint64(time.Now().UnixMilli()) * 1000
	return &Hub{seq: base, base: base, ring: make([]Event, 0, ring), clients: map[*Client]struct{}{}, bufSize: buf}
}

// Seq is the id of the last event published.
func (h *Hub) Seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// Dropped counts clients dropped for being slow.
func (h *Hub) Dropped() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dropped
}

// Clients counts the subscribers.
func (h *Hub) Clients() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// Publish numbers ev and sends it to every client without blocking.
func (h *Hub) Publish(ev Event) Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ev
	}
	h.seq++
	ev.Seq = h.seq
	if len(h.ring) == cap(h.ring) {
		copy(h.ring, h.ring[1:])
		h.ring = h.ring[:len(h.ring)-1]
	}
	h.ring = append(h.ring, ev)
	for c := range h.clients {
		select {
		case c.C <- ev:
		default:
			delete(h.clients, c)
			close(c.C)
			h.dropped++
		}
	}
	return ev
}

// Subscribe adds a client. With last (a Last-Event-ID) it also returns the
// events after it still in the ring; reset is true when last is unknown
// (too old, or from another server) and the client must refetch all.
func (h *Hub) Subscribe(last uint64, hasLast bool) (c *Client, replay []Event, reset bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c = &Client{C: make(chan Event, h.bufSize)}
	if h.closed {
		close(c.C)
		return c, nil, false
	}
	h.clients[c] = struct{}{}
	if !hasLast || last == h.seq {
		return c, nil, false
	}
	oldest := h.base
	if len(h.ring) > 0 {
		oldest = h.ring[0].Seq - 1
	}
	if last > h.seq || last < oldest {
		return c, nil, true
	}
	for _, ev := range h.ring {
		if ev.Seq > last {
			replay = append(replay, ev)
		}
	}
	return c, replay, false
}

// Unsubscribe removes c (a no-op when it was dropped already).
func (h *Hub) Unsubscribe(c *Client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.clients[c]; ok {
		delete(h.clients, c)
		close(c.C)
	}
}

// Close ends every stream; later subscriptions end at once.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for c := range h.clients {
		delete(h.clients, c)
		close(c.C)
	}
}

// sseWriteTimeout bounds one write to a stream: a client that stops
// reading loses its stream instead of holding a goroutine forever.
const sseWriteTimeout = 10 * time.Second

// handleEvents is /events: text/event-stream of {kind, id, file} events
// with the hub's ids, a hello first, a replay after Last-Event-ID, and a
// heartbeat comment.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	var last uint64
	hasLast := false
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		last, hasLast = n, true
		if err != nil {
			last = 0 // unknown: a reset
		}
	}
	c, replay, reset := s.hub.Subscribe(last, hasLast)
	defer s.hub.Unsubscribe(c)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(id uint64, ev Event) bool {
		data, _ := jsondoc.Compact(ev)
		rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, ev.Kind, data); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	fmt.Fprint(w, "retry: 1000\n\n")
	seq := s.hub.Seq()
	if reset {
		if !send(seq, Event{Kind: KindReset}) {
			return
		}
	} else if !hasLast {
		if !send(seq, Event{Kind: KindHello}) {
			return
		}
	}
	for _, ev := range replay {
		if !send(ev.Seq, ev) {
			return
		}
	}
	if !hasLast || len(replay) == 0 {
		rc.Flush()
	}
	beat := time.NewTicker(s.opts.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case ev, ok := <-c.C:
			if !ok {
				return
			}
			if !send(ev.Seq, ev) {
				return
			}
		case <-beat.C:
			rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}
