package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCassetteDir(t *testing.T) {
	root := "/work/repo"
	for _, tt := range []struct {
		cassette, want, err string
	}{
		{"/tmp/cas", "/tmp/cas/0007", ""},
		{"../cas", "/work/cas/0007", ""},
		{"../repo-cassette", "/work/repo-cassette/0007", ""},
		{"cas", "", "inside the repository"},
		{"/work/repo/.runner/cas", "", "inside the repository"},
		{".", "", "inside the repository"},
	} {
		got, err := CassetteDir(root, tt.cassette, 7)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("CassetteDir(%q) error = %v, want %q", tt.cassette, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CassetteDir(%q) = %q, %v; want %q", tt.cassette, got, err, tt.want)
		}
	}
}

func TestUnfence(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                       `{"a":1}`,
		"```json\n{\"a\":1}\n```":       `{"a":1}`,
		"```\n{\"a\":1}\n```":           `{"a":1}`,
		"```go\n{\"a\":1}\n```":         "```go\n{\"a\":1}\n```",
		"```json\n{}\n```\n```json\n{}": "```json\n{}\n```\n```json\n{}",
		"Here: ```json\n{}\n```":        "Here: ```json\n{}\n```",
	} {
		if got := unfence(in); got != want {
			t.Errorf("unfence(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorClasses(t *testing.T) {
	for _, tt := range []struct {
		msg, class string
	}{
		{"exceeded retry limit, last status: 429 Too Many Requests", ClassRateLimit},
		{"unexpected status 401 Unauthorized: bad key", ClassAuth},
		{"We're currently experiencing high demand", ClassOutage},
		{"You've hit your usage limit. Try again at 3pm.", ClassRateLimit},
		{`{"error":{"code":"rate_limit_exceeded","message":"slow down","type":"requests"},"type":"error"}`, ClassRateLimit},
		{`{"error":{"code":"invalid_request_error","message":"prompt too long","type":"invalid_request_error"}}`, ClassAPIError},
	} {
		if c, _ := codexErrorClass(tt.msg); c != tt.class {
			t.Errorf("codexErrorClass(%q) = %s, want %s", tt.msg, c, tt.class)
		}
	}
	if _, line := codexErrorClass(`{"error":{"code":"invalid_request_error","message":"prompt too long"}}`); line != "codex: invalid_request_error: prompt too long" {
		t.Errorf("codex JSON error body reads %q", line)
	}
	for msg, want := range map[string]int{
		`[API Error: {"error":{"code":401,"message":"x","status":"UNAUTHENTICATED"}}]`: 401,
		`quota RESOURCE_EXHAUSTED`: 429,
		"[API Error: slow down]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method": 429,
		`something else`: 0,
	} {
		if got := geminiStatus(msg); got != want {
			t.Errorf("geminiStatus(%q) = %d, want %d", msg, got, want)
		}
	}
	status := 429
	if c, _ := claudeErrorClass("success", &status, "API Error: 429"); c != ClassRateLimit {
		t.Errorf("claude 429 = %s", c)
	}
	if c, _ := claudeErrorClass("error_max_turns", nil, ""); c != ClassTurnLimit {
		t.Errorf("claude max turns = %s", c)
	}
}

func TestLastLine(t *testing.T) {
	var last []byte // as the claude backend keeps its result event
	l := &lineSplitter{fn: func(b []byte) {
		if bytes.HasPrefix(b, []byte(`{"type":"result"`)) {
			last = append(last[:0], b...)
		}
	}}
	for _, chunk := range []string{`{"type":"x"}` + "\n" + `{"type":"res`, `ult","n":1}` + "\n", `{"type":"result","n":2}` + "\nnoise\n"} {
		l.Write([]byte(chunk))
	}
	l.flush()
	if got := string(last); got != `{"type":"result","n":2}` {
		t.Errorf("lastLine = %q", got)
	}
	var lines []string
	s := &lineSplitter{fn: func(b []byte) { lines = append(lines, string(b)) }}
	s.Write([]byte("a\nb"))
	s.Write([]byte("c\n\nd"))
	if strings.Join(lines, "|") != "a|bc|" {
		t.Errorf("lineSplitter lines = %q", lines)
	}
}

func TestClaudeResetAt(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at, ok := claudeRetryAt([]byte(`{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"retry_delay_ms":90000,"error_status":429,"error":"rate_limit"}`), now)
	if !ok || !at.Equal(now.Add(90*time.Second)) {
		t.Fatalf("claudeRetryAt = %v, %v; want %v", at, ok, now.Add(90*time.Second))
	}
	if _, ok := claudeRetryAt([]byte(`{"type":"system","subtype":"api_retry","retry_delay_ms":500,"error_status":529}`), now); ok {
		t.Error("claudeRetryAt took an overload retry for a rate limit")
	}
	for _, tt := range []struct {
		result  string
		retryAt time.Time
		want    string
	}{
		{"Claude AI usage limit reached|1767323045", at, "2026-01-02T03:04:05Z"},
		{"API Error: Request rejected (429) · slow down", at, "2026-01-02T03:05:35Z"},
		{"API Error: Request rejected (429) · slow down", time.Time{}, ""},
	} {
		if got := claudeResetAt(tt.result, tt.retryAt); got != tt.want {
			t.Errorf("claudeResetAt(%q) = %q, want %q", tt.result, got, tt.want)
		}
	}
}

// The answer text collected from Gemini's and OpenCode's event streams is
// capped: a CLI streaming without end keeps at most
// maxAnswerText bytes, and the answer is then invalid, not cut silently.
func TestAnswerTextCapped(t *testing.T) {
	chunk := strings.Repeat("x", 64<<10)
	line := func(format string) []byte {
		b, _ := json.Marshal(chunk)
		return []byte(strings.Replace(format, "CHUNK", string(b), 1))
	}
	g := &geminiEvents{}
	o := &openCodeEvents{}
	o.line([]byte(`{"type":"step_start"}`))
	for range 2 * maxAnswerText / len(chunk) {
		g.line(line(`{"type":"message","role":"assistant","content":CHUNK}`))
		o.line(line(`{"type":"text","part":{"type":"text","text":CHUNK}}`))
	}
	for name, a := range map[string]*answerText{"gemini": &g.text, "opencode": o.lastText()} {
		if n := len(a.String()); n != maxAnswerText {
			t.Errorf("%s kept %d bytes, want the cap %d", name, n, maxAnswerText)
		}
		if msg, over := a.Over(); !over || !strings.Contains(msg, "larger than") {
			t.Errorf("%s: Over() = %q, %v; want the answer reported too large", name, msg, over)
		}
	}
	// A tool call (Gemini) or a new step (OpenCode) starts a new answer.
	g.line([]byte(`{"type":"tool_use"}`))
	g.line([]byte(`{"type":"message","role":"assistant","content":"{}"}`))
	o.line([]byte(`{"type":"step_start"}`))
	o.line([]byte(`{"type":"text","part":{"type":"text","text":"{}"}}`))
	for name, a := range map[string]*answerText{"gemini": &g.text, "opencode": o.lastText()} {
		if _, over := a.Over(); over || a.String() != "{}" {
			t.Errorf("%s: after a new answer: %q (over %v), want {}", name, a.String(), over)
		}
	}
}

// A one-line summary is cut at a character boundary: never in
// the middle of a multi-byte character.
func TestOneLineUTF8(t *testing.T) {
	for n := 0; n <= 12; n++ {
		got := oneLine("ééééé\nüüü", n)
		if !utf8.ValidString(got) {
			t.Errorf("oneLine(…, %d) = %q: not valid UTF-8", n, got)
		}
		if cut := strings.TrimSuffix(got, "…"); len(cut) > n {
			t.Errorf("oneLine(…, %d) = %q: longer than %d bytes", n, got, n)
		}
	}
	if got := oneLine("a  b\nc", 10); got != "a b c" {
		t.Errorf("oneLine = %q, want %q", got, "a b c")
	}
}
