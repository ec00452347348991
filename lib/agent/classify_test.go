package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/proc"
)

// TestProcessClass: the end the runner caused decides the class. A hang
// (no output for the idle timeout) is the agent's fault and consumes an
// attempt; a timeout (the iteration's budget) and an interruption do not;
// a process that ended by itself is left to the backend.
func TestProcessClass(t *testing.T) {
	for _, c := range []struct {
		r     proc.Result
		class string
	}{
		{proc.Result{Canceled: true, Idle: true}, ClassInterrupted},
		{proc.Result{TimedOut: true, Idle: true}, ClassTimeout},
		{proc.Result{Idle: true}, ClassHang},
		{proc.Result{ExitCode: 1}, ""},
	} {
		if got, _ := ProcessClass(c.r); got != c.class {
			t.Errorf("%+v: class %q, want %q", c.r, got, c.class)
		}
	}
}

// TestHTTPErrorClass: a provider's HTTP status decides the class, the
// whole 5xx range an outage and nothing past it; with no status, a
// message in the words of an unreachable provider is an outage, any other
// an API error; the line names the status only when there is one.
func TestHTTPErrorClass(t *testing.T) {
	for _, c := range []struct {
		status     int
		msg, class string
		line       string
	}{
		{401, "bad key", ClassAuth, "x: HTTP 401: bad key"},
		{403, "forbidden", ClassAuth, "x: HTTP 403: forbidden"},
		{429, "slow down", ClassRateLimit, "x: HTTP 429: slow down"},
		{499, "client closed", ClassAPIError, "x: HTTP 499: client closed"},
		{500, "boom", ClassOutage, "x: HTTP 500: boom"},
		{599, "boom", ClassOutage, "x: HTTP 599: boom"},
		{600, "odd", ClassAPIError, "x: HTTP 600: odd"},
		{400, "bad request", ClassAPIError, "x: HTTP 400: bad request"},
		{0, "fetch failed: ECONNREFUSED", ClassOutage, "x: fetch failed: ECONNREFUSED"},
		{0, "the model said no", ClassAPIError, "x: the model said no"},
	} {
		class, line := httpErrorClass("x", c.status, c.msg)
		if class != c.class || line != c.line {
			t.Errorf("httpErrorClass(%d, %q) = %s, %q; want %s, %q", c.status, c.msg, class, line, c.class, c.line)
		}
	}
}

// TestOneLine: whitespace squeezed to single spaces; a line of exactly n
// bytes kept whole, a longer one cut at a character boundary with "…".
func TestOneLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\n  b\tc", 10, "a b c"},
		{"abcde", 5, "abcde"},
		{"abcdef", 5, "abcde…"},
		{"abcdé", 5, "abcd…"}, // é is two bytes: not cut in half
		{"ééé", 3, "é…"},
	} {
		if got := oneLine(c.in, c.n); got != c.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestBackoffFrom: the wait doubles with each consecutive limit up to the
// cap, and stays there.
func TestBackoffFrom(t *testing.T) {
	for k, want := range []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 15 * time.Minute, 15 * time.Minute} {
		if got := backoff(k); got != want {
			t.Errorf("backoff(%d) = %v, want %v", k, got, want)
		}
	}
	if got := backoffFrom(RateLimitBackoffCap/2, 1); got != RateLimitBackoffCap {
		t.Errorf("half the cap doubled = %v, want the cap", got)
	}
	if got := backoffFrom(RateLimitBackoffCap, 3); got != RateLimitBackoffCap {
		t.Errorf("the cap doubled = %v, want the cap", got)
	}
}

// TestRefusalWordsCausedBy: a "Caused by:" up to four lines after the
// refusal is joined to it, one further down is not, and one on the last
// line, with no cause after it, is not either.
func TestRefusalWordsCausedBy(t *testing.T) {
	for _, c := range []struct {
		out, want string
	}{
		{"Error: failed to load config\nCaused by:\n  bad key\n", "Error: failed to load config: bad key"},
		{"Error: failed to load config\n\n\n\nCaused by:\nbad key", "Error: failed to load config: bad key"},
		{"Error: failed to load config\n\n\n\n\nCaused by:\nbad key", "Error: failed to load config"},
		{"Error: failed to load config\nCaused by:", "Error: failed to load config"},
		{"WARNING: old\n{\"event\":1}\nsomething odd\n", "something odd"},
	} {
		if got := refusalWords(c.out); got != c.want {
			t.Errorf("refusalWords(%q) = %q, want %q", c.out, got, c.want)
		}
	}
	if got := refusalWords("Invalid configuration in /s.json:\n" + strings.Repeat("line\n", 7)); got != "Invalid configuration in /s.json: line: line: line: line: line" {
		t.Errorf("a multi-line refusal: %q", got)
	}
}

// TestLineSplitter: lines handed over whole whatever the writes' pieces,
// a line of exactly maxLine kept, one byte more skipped (and the next
// line read), an unterminated last line handed over by flush.
func TestLineSplitter(t *testing.T) {
	var got []string
	l := &lineSplitter{fn: func(b []byte) { got = append(got, string(b)) }}
	l.Write([]byte("ab"))
	l.Write([]byte("c\n"))
	l.Write([]byte("\nd\ne"))
	at := strings.Repeat("x", maxLine)
	l.Write([]byte("\n" + at[:10]))
	l.Write([]byte(at[10:] + "\n" + at + "y\nz"))
	l.flush()
	l.flush()
	want := []string{"abc", "", "d", "e", at, "z"}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %d bytes %.10q, want %d bytes %.10q", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}

// TestAnswerText: an answer kept up to maxAnswerText bytes exactly, the
// rest counted; white space alone is nothing said, a dropped tail is
// something; Reset forgets both.
func TestAnswerText(t *testing.T) {
	var a answerText
	a.WriteString("  \n")
	if a.said() {
		t.Error("white space said something")
	}
	a.Reset()
	a.WriteString(strings.Repeat("a", maxAnswerText-1))
	a.WriteString("b")
	if a.dropped != 0 || len(a.String()) != maxAnswerText {
		t.Errorf("at the cap: %d kept, %d dropped", len(a.String()), a.dropped)
	}
	a.WriteString("cde")
	if a.dropped != 3 || len(a.String()) != maxAnswerText || !a.said() {
		t.Errorf("past the cap: %d kept, %d dropped", len(a.String()), a.dropped)
	}
	a.Reset()
	if a.dropped != 0 || a.String() != "" || a.said() {
		t.Errorf("after Reset: %q, %d dropped", a.String(), a.dropped)
	}
}
