package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/proc"
)

// The words each CLI prints for an endpoint that refuses connections or
// answers 503 (as the real CLIs print them) are outages; a rate limit, a
// refused key, a bad request are not.
func TestOutageClasses(t *testing.T) {
	for _, tt := range []struct {
		msg, class string
	}{
		{"Reconnecting... waiting for network (Connection failed: error sending request)", ClassOutage},
		{"unexpected status 503 Service Unavailable: service unavailable, url: http://127.0.0.1:58903/v1/responses", ClassOutage},
		{"unexpected status 500 Internal Server Error: internal error, url: http://127.0.0.1:5003/v1/responses", ClassOutage},
		{"stream disconnected before completion: error decoding response body", ClassOutage},
		{`{"error":{"code":"server_error","message":"The server had an error"}}`, ClassOutage},
		{"exceeded retry limit, last status: 429 Too Many Requests, url: http://127.0.0.1:5003/v1", ClassRateLimit},
		{"unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:5030/v1", ClassAuth},
		{"unexpected status 400 Bad Request: prompt too long, url: http://127.0.0.1:5500/v1", ClassAPIError},
	} {
		if c, _ := codexErrorClass(tt.msg); c != tt.class {
			t.Errorf("codexErrorClass(%q) = %s, want %s", tt.msg, c, tt.class)
		}
	}
	s503, s529, s500, s400, s429 := 503, 529, 500, 400, 429
	for _, tt := range []struct {
		status *int
		text   string
		class  string
	}{
		{nil, "API Error: Unable to connect to API (ConnectionRefused)", ClassOutage},
		{&s503, "API Error: 503 service unavailable. This is a server-side issue", ClassOutage},
		{&s529, "API Error: overloaded", ClassOutage},
		{&s500, "API Error: internal", ClassOutage},
		{&s400, "API Error: prompt is too long", ClassAPIError},
		{&s429, "API Error: slow down", ClassRateLimit},
		{nil, "API Error: something odd", ClassAPIError},
	} {
		if c, _ := claudeErrorClass("success", tt.status, tt.text); c != tt.class {
			t.Errorf("claudeErrorClass(%v, %q) = %s, want %s", tt.status, tt.text, c, tt.class)
		}
	}
	for _, tt := range []struct {
		status int
		msg    string
		class  string
	}{
		{0, "Cannot connect to API: Unable to connect. Is the computer able to access the url?", ClassOutage},
		{503, "service unavailable", ClassOutage},
		{502, "", ClassOutage},
		{0, "[API Error: exception TypeError: fetch failed sending request]", ClassOutage},
		{geminiStatus(`[API Error: {"error":{"code":503,"message":"x","status":"UNAVAILABLE"}}]`), "x", ClassOutage},
		{400, "the server said: connection refused, in its body", ClassAPIError},
		{0, "model not found", ClassAPIError},
		{429, "service unavailable", ClassRateLimit},
	} {
		if c, _ := httpErrorClass("cli", tt.status, tt.msg); c != tt.class {
			t.Errorf("httpErrorClass(%d, %q) = %s, want %s", tt.status, tt.msg, c, tt.class)
		}
	}
}

// Claude Code's api_retry events: a connection that got no answer
// (error_status null) and a provider's own failure are outage retries; a
// rate limit's is not.
func TestClaudeOutageRetry(t *testing.T) {
	for ev, want := range map[string]bool{
		`{"type":"system","subtype":"api_retry","attempt":3,"max_retries":10,"retry_delay_ms":2293,"error_status":null,"error":"unknown"}`:   true,
		`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":570,"error_status":503,"error":"server_error"}`: true,
		`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":570,"error_status":529,"error":"overloaded"}`:   true,
		`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"retry_delay_ms":90000,"error_status":429,"error":"rate_limit"}`: false,
	} {
		if words, ok := claudeOutageRetry([]byte(ev)); ok != want || (ok && words == "") {
			t.Errorf("claudeOutageRetry(%s) = %q, %v; want %v", ev, words, ok, want)
		}
	}
}

// The watch stops a CLI that has only retried its connection for the idle
// time, not one that made progress in between; a session the deadline or
// the idle timeout ended while its CLI retried is an outage, an
// interruption stays one.
func TestOutageWatch(t *testing.T) {
	ctx, stop := context.WithCancelCause(t.Context())
	w := &outageWatch{idle: 50 * time.Millisecond, stop: stop}
	w.retrying("Reconnecting... waiting for network", time.Now())
	w.progressed()
	w.expire() // as its timer would, had progress not stopped it
	if ctx.Err() != nil || w.timer != nil {
		t.Fatal("the watch stopped a session that made progress")
	}
	w.retrying("Reconnecting... waiting for network (Connection failed)", time.Now())
	w.retrying("Reconnecting... waiting for network (Connection failed: again)", time.Now())
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), errOutage) {
		t.Fatalf("cause %v, want errOutage", context.Cause(ctx))
	}
	s := &session{Result: proc.Result{Canceled: true}, watch: w}
	if c, msg := s.ended(t.Context(), "codex"); c != ClassOutage || msg != "codex: the provider did not answer: the CLI only retried its connection for 50ms (agent_idle_timeout_secs): Reconnecting... waiting for network (Connection failed: again)" {
		t.Errorf("stopped by the watch: %s %q", c, msg)
	}
	interrupted, cancel := context.WithCancel(t.Context())
	cancel()
	if c, _ := s.ended(interrupted, "codex"); c != ClassInterrupted {
		t.Errorf("interrupted while the watch stopped it: %s, want %s", c, ClassInterrupted)
	}
	retrying := &outageWatch{}
	retrying.retrying("API retry 4 of 10 (no answer: unknown)", time.Now())
	for _, r := range []proc.Result{{TimedOut: true}, {Idle: true}} {
		if c, _ := (&session{Result: r, watch: retrying}).ended(t.Context(), "claude"); c != ClassOutage {
			t.Errorf("%+v while retrying: %s, want outage", r, c)
		}
		if c, _ := (&session{Result: r, watch: &outageWatch{}}).ended(t.Context(), "claude"); c == ClassOutage || c == "" {
			t.Errorf("%+v with no retry: %s, want the process's class", r, c)
		}
	}
	if c, _ := (&session{Result: proc.Result{TimedOut: true}}).ended(t.Context(), "gemini"); c != ClassTimeout {
		t.Errorf("no watch: %s, want timeout", c)
	}
}

// With the idle timeout off (agent_idle_timeout_secs = 0) the watch never
// stops a session, however long its CLI retries: it is only judged when
// it ends.
func TestOutageWatchIdleOff(t *testing.T) {
	ctx, stop := context.WithCancelCause(t.Context())
	w := &outageWatch{stop: stop}
	w.retrying("Reconnecting... waiting for network", time.Now())
	w.retrying("Reconnecting... waiting for network (Connection failed: again)", time.Now())
	defer w.close()
	if w.timer != nil || ctx.Err() != nil {
		t.Fatalf("with the idle timeout off, retries armed a timer to stop the session (%v)", context.Cause(ctx))
	}
	s := &session{Result: proc.Result{TimedOut: true}, watch: w}
	if c, _ := s.ended(t.Context(), "codex"); c != ClassOutage {
		t.Errorf("a session that ended while its CLI retried: %s, want outage", c)
	}
}

// What a session reports about itself is counted toward
// max_reported_failures: every failure report of a command agent, a
// CLI's rate limit or API error; a CLI's outage is not.
func TestReported(t *testing.T) {
	for _, tt := range []struct {
		backend, class string
		want           bool
	}{
		{"command", ClassRateLimit, true}, {"command", ClassOutage, true}, {"command", ClassAPIError, true}, {"command", ClassAuth, true},
		{"replay", ClassRateLimit, true},
		{"codex", ClassRateLimit, true}, {"claude", ClassAPIError, true},
		{"codex", ClassOutage, false}, {"claude", ClassAuth, false}, {"command", ClassNoOutput, false}, {"command", ClassTimeout, false},
	} {
		if got := Reported(tt.backend, tt.class); got != tt.want {
			t.Errorf("Reported(%s, %s) = %v, want %v", tt.backend, tt.class, got, tt.want)
		}
	}
}
