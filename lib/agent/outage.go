package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// An outage is a session that could not reach its provider, or whose
// provider failed on its side: connection refused or reset, a name that
// does not resolve, a stream cut short, HTTP 5xx, overloaded. It is no
// fault of the agent's: the iteration pauses like a usage limit (no
// attempt consumed) and the run tries a fresh session after a backoff.
// Each CLI says it in its own words; these are the words the CLIs the
// backends drive print for an endpoint that refuses connections or
// answers 503 (Codex: "Reconnecting... waiting for network (Connection
// failed: error sending request)", "unexpected status 503 Service
// Unavailable"; Claude Code: "API Error: Unable to connect to API
// (ConnectionRefused)"; OpenCode: "Cannot connect to API: Unable to
// connect"; Gemini CLI: "fetch failed sending request").
var outageWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)` + strings.Join([]string{
		`connection (?:failed|refused|reset|closed|error|timed out)`, `connectionrefused`, `connectionreset`,
		`econnrefused`, `econnreset`, `etimedout`, `enotfound`, `eai_again`, `ehostunreach`, `enetunreach`,
		`unable to connect`, `cannot connect`, `could not connect`, `failed to connect`,
		`error sending request`, `fetch failed`, `socket hang up`, `stream disconnected`, `waiting for network`,
		`dns error`, `failed to lookup address`, `getaddrinfo`, `name resolution`, `network is unreachable`,
		`service unavailable`, `bad gateway`, `gateway time-?out`, `internal server error`,
		`overloaded`, `high demand`, `server_error`,
		`\b(?:status|http|code)[ :="]*5\d\d\b`,
	}, "|"))
})

// outageText reports whether a CLI's failure message says its provider
// was unreachable or failed on its side.
func outageText(msg string) bool { return outageWords().MatchString(msg) }

// outageStatus reports whether an HTTP status is the provider's own
// failure: 5xx, and 529 (overloaded) among them.
func outageStatus(status int) bool { return status >= 500 && status <= 599 }

// errOutage is the cause of a session stopped by an outageWatch.
var errOutage = errors.New("the CLI only retried its connection")

// outageWatch follows a CLI that retries a provider it cannot reach: a
// backend's event handler tells it each retry (retrying, with the CLI's
// words) and each event that is progress. A CLI that has only retried for
// the idle timeout (agent_idle_timeout_secs) is stopped: a CLI that waits
// for the network by itself (Codex does, without end) would otherwise
// hold the iteration until its budget ends, and the timeout would stop
// the run. A session that ends, however, while its CLI retried is an
// outage (Evidence).
// A zero outageWatch is ready: runCLI sets idle (0: the session is never
// stopped, only judged when it ends) and stop.
type outageWatch struct {
	mu      sync.Mutex
	idle    time.Duration
	stop    context.CancelCauseFunc
	since   time.Time // the first retry since the last progress; zero when none
	last    string    // the CLI's words on its last retry
	timer   *time.Timer
	stopped bool // the watch stopped the session
}

// retrying records a retry of the connection, in the CLI's words, at now.
func (w *outageWatch) retrying(words string, now time.Time) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = oneLine(words, 300)
	if !w.since.IsZero() {
		return
	}
	w.since = now
	if w.idle > 0 && w.stop != nil {
		w.timer = time.AfterFunc(w.idle, w.expire)
	}
}

// progressed records an event that is not a retry: the CLI reached its
// provider (or did anything else).
func (w *outageWatch) progressed() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.since, w.last = time.Time{}, ""
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

// expire stops the session when the CLI still only retries.
func (w *outageWatch) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() || w.stopped {
		return
	}
	w.stopped = true
	w.stop(errOutage)
}

// close stops the timer.
func (w *outageWatch) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
}

// Evidence is the message of a session that ended while its CLI retried
// its connection, or that the watch stopped: "" when it made progress
// since its last retry. cli names the CLI.
func (w *outageWatch) Evidence(cli string) (string, bool) {
	if w == nil {
		return "", false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.stopped:
		return fmt.Sprintf("%s: the provider did not answer: the CLI only retried its connection for %s (agent_idle_timeout_secs): %s", cli, w.idle, w.last), true
	case !w.since.IsZero():
		return fmt.Sprintf("%s: the provider did not answer: the CLI was retrying its connection when the session ended: %s", cli, w.last), true
	}
	return "", false
}

// ended classifies a session that the runner ended (ProcessClass) or
// that ended while its CLI retried a provider it could not reach: an
// outage, whether the watch stopped it, the iteration's deadline or the
// idle timeout ended it. An interruption (ctx, the step's) stays one.
// "" when the session ended by itself otherwise.
func (s *session) ended(ctx context.Context, cli string) (class, message string) {
	if ctx.Err() == nil && (s.Canceled || s.TimedOut || s.Idle) {
		if msg, ok := s.watch.Evidence(cli); ok {
			return ClassOutage, msg
		}
	}
	return ProcessClass(s.Result)
}
