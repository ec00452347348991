// Package modelserver is a scripted model server for tests: it speaks a
// model API's wire protocol (server-sent events) on 127.0.0.1 so that the
// real agent CLIs can run against it offline. Each request's turn is the
// number of assistant messages already in the conversation; the script
// says what the model does on each turn: call a tool, give the structured
// answer, say something, fail with an HTTP status, or hang.
package modelserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/alecthomas/kong"
)

// Turn is one scripted model turn. Exactly one of its fields is set, but
// for Text beside Tool (gemini protocol): prose before the tool call, in the
// same response.
type Turn struct {
	Tool   string          `json:"tool,omitempty"`   // call this tool ...
	Input  json.RawMessage `json:"input,omitempty"`  // ... with this input
	Output json.RawMessage `json:"output,omitempty"` // the structured answer (Claude's StructuredOutput tool)
	Text   string          `json:"text,omitempty"`   // plain text, end of turn
	Status int             `json:"status,omitempty"` // an HTTP error status ...
	Header http.Header     `json:"header,omitempty"` // ... with these headers
	Error  string          `json:"error,omitempty"`  // ... and this message
	Hang   bool            `json:"hang,omitempty"`   // never answer
}

// Script is the whole scripted conversation: Turns for every session, or
// Sessions, one list of turns per session in order (a session starts with
// each request that has no assistant turn yet).
type Script struct {
	Turns    []Turn   `json:"turns"`
	Sessions [][]Turn `json:"sessions"`
}

type options struct {
	Protocol string `enum:"anthropic,responses,chat,gemini" default:"anthropic" help:"Wire protocol: anthropic (POST /v1/messages, SSE), responses (OpenAI Responses API, POST /v1/responses, SSE), chat (OpenAI chat completions, POST /v1/chat/completions, SSE) or gemini (POST /v1beta/models/<m>:streamGenerateContent?alt=sse)."`
	Script   string `required:"" type:"existingfile" help:"The script (JSON: {\"turns\": [...]})."`
	AddrFile string `required:"" help:"Write the base URL (http://127.0.0.1:PORT) here once listening."`
	Listen   string `default:"127.0.0.1:0" help:"The address to listen on: a port chosen by the system, or one a test refused connections on before (an endpoint that comes back)."`
	Log      string `help:"Append one line per request: method, path, turn."`
	Bodies   string `help:"Append every request body (one JSON document per line), for debugging a CLI's requests."`
	Reload   bool   `help:"Read the script again when a session starts, and start over from its first session when it changed: one server (one URL) for a test's steps, each with its own script copied in place."`

	FailFirst      int    `help:"Answer the first N scripted requests with an HTTP error instead (a rate limit that passes)."`
	FailStatus     int    `default:"429" help:"The status of those errors."`
	FailRetryAfter string `help:"The Retry-After header of those errors."`
}

// Main runs the server until it is killed.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	p, err := kong.New(&o, kong.Name("modelserver"), kong.Writers(stdout, stderr), kong.Exit(func(int) {}))
	if err != nil {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 80
	}
	if _, err := p.Parse(args); err != nil {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 80
	}
	data, err := os.ReadFile(o.Script)
	if err != nil {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 1
	}
	sc, err := parseScript(data)
	if err != nil {
		fmt.Fprintf(stderr, "modelserver: %s: %v\n", o.Script, err)
		return 1
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 1
	}
	s := &server{script: sc, logPath: o.Log, bodiesPath: o.Bodies, failLeft: o.FailFirst}
	if o.Reload {
		s.scriptPath, s.scriptData = o.Script, data
	}
	if o.FailFirst > 0 {
		s.failTurn = Turn{Status: o.FailStatus, Error: "scripted failure"}
		if o.FailRetryAfter != "" {
			s.failTurn.Header = http.Header{"Retry-After": {o.FailRetryAfter}}
		}
	}
	url := "http://" + ln.Addr().String()
	if err := os.WriteFile(o.AddrFile+".tmp", []byte(url), 0o644); err == nil {
		err = os.Rename(o.AddrFile+".tmp", o.AddrFile)
	}
	if err != nil {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 1
	}
	handler := s.anthropic
	switch o.Protocol {
	case "responses":
		handler = s.responses
	case "chat":
		handler = s.chat
	case "gemini":
		handler = s.gemini
	}
	if err := http.Serve(ln, http.HandlerFunc(handler)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 1
	}
	return 0
}

// parseScript reads a script. Errors: not JSON, or no turn, or a session
// without one.
func parseScript(data []byte) (Script, error) {
	var sc Script
	if err := json.Unmarshal(data, &sc); err != nil || (len(sc.Turns) == 0 && len(sc.Sessions) == 0) || slices.ContainsFunc(sc.Sessions, func(ts []Turn) bool { return len(ts) == 0 }) {
		return sc, fmt.Errorf("want {\"turns\": [...]} or {\"sessions\": [[...], ...]} with at least one turn each (%v)", err)
	}
	return sc, nil
}

type server struct {
	script     Script
	scriptPath string // --reload: the script's file, read again as each session starts
	scriptData []byte // its bytes as last read
	logPath    string
	bodiesPath string
	mu         sync.Mutex
	failLeft   int  // scripted requests still to fail (--fail-first)
	failTurn   Turn // how they fail
	session    int  // index of the current session in script.Sessions
	started    bool // a session has started
}

// readBody reads the request body and keeps a copy in the bodies file.
func (s *server) readBody(r *http.Request) []byte {
	body, _ := io.ReadAll(r.Body)
	if s.bodiesPath != "" {
		s.mu.Lock()
		defer s.mu.Unlock()
		if f, err := os.OpenFile(s.bodiesPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Write(append(body, '\n'))
			f.Close()
		}
	}
	return body
}

// fail answers with the turn's HTTP error status, headers and the body
// the protocol uses for errors (body builds it from the status and the
// message); it reports whether the turn was an error or a hang (then the
// response is done).
func (s *server) fail(w http.ResponseWriter, r *http.Request, t Turn, body func(status int, msg string) any) bool {
	switch {
	case t.Hang:
		<-r.Context().Done()
		return true
	case t.Status != 0:
		for k, vs := range t.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		json.NewEncoder(w).Encode(body(t.Status, t.Error))
		return true
	}
	return false
}

// openAIError is the error body of the Anthropic and OpenAI APIs, with the
// error type each names for a status.
func openAIError(kinds map[int]string) func(int, string) any {
	return func(status int, msg string) any {
		kind := kinds[status]
		if kind == "" {
			kind = "api_error"
		}
		return map[string]any{"type": "error", "error": map[string]any{"type": kind, "code": kind, "message": msg}}
	}
}

var (
	anthropicErrors = openAIError(map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 429: "rate_limit_error", 529: "overloaded_error"})
	openaiErrors    = openAIError(map[int]string{400: "invalid_request_error", 401: "invalid_api_key", 429: "rate_limit_exceeded", 500: "server_error"})
)

// geminiError is the Gemini API's error body.
func geminiError(status int, msg string) any {
	name := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}[status]
	return map[string]any{"error": map[string]any{"code": status, "message": msg, "status": name}}
}

// sse writes one server-sent event; name "" writes a data line only.
func sse(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *server) log(r *http.Request, turn int) {
	if s.logPath == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.OpenFile(s.logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s turn=%d\n", r.Method, r.URL.Path, turn)
}

// turn picks the script's turn for a conversation with n assistant
// messages; past the end, the last turn repeats. While --fail-first has
// failures left, each call spends one and returns the failure instead.
func (s *server) turn(n int) Turn {
	s.mu.Lock()
	if s.failLeft > 0 {
		s.failLeft--
		s.mu.Unlock()
		return s.failTurn
	}
	if n == 0 && s.scriptPath != "" {
		s.reload()
	}
	turns := s.script.Turns
	if len(s.script.Sessions) > 0 {
		if n == 0 {
			if s.started {
				s.session++
			}
			s.started = true
		}
		turns = s.script.Sessions[min(s.session, len(s.script.Sessions)-1)]
	}
	s.mu.Unlock()
	return turns[min(n, len(turns)-1)]
}

// anthropic serves POST /v1/messages (Anthropic Messages API, streaming).
func (s *server) anthropic(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		s.log(r, -1)
		w.WriteHeader(http.StatusOK) // connectivity probes
		return
	}
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	json.Unmarshal(s.readBody(r), &req)
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	s.log(r, n)
	t := s.turn(n)
	if s.fail(w, r, t, anthropicErrors) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name string, data any) { sse(w, name, data) }
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": "scripted-model",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": 100, "output_tokens": 1, "cache_read_input_tokens": 40},
	}})
	stop := "end_turn"
	tool, input := t.Tool, t.Input
	if t.Output != nil {
		tool, input = "StructuredOutput", t.Output
	}
	if tool != "" {
		stop = "tool_use"
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d", n), "name": tool, "input": map[string]any{}}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	} else {
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": t.Text}})
	}
	ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 20}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

// responses serves POST /v1/responses (OpenAI Responses API, streaming),
// as Codex CLI speaks it. The turn is the number of function calls
// already answered in the request's input; a structured answer is the
// final assistant message whose text is the output JSON.
func (s *server) responses(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		s.log(r, -1)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	var req struct {
		Input []struct {
			Type string `json:"type"`
			Role string `json:"role"`
		} `json:"input"`
	}
	json.Unmarshal(s.readBody(r), &req)
	n := 0
	for _, it := range req.Input {
		if it.Type == "function_call" || (it.Type == "message" && it.Role == "assistant") {
			n++
		}
	}
	s.log(r, n)
	t := s.turn(n)
	if s.fail(w, r, t, openaiErrors) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	id := fmt.Sprintf("resp_%d", n)
	sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id, "status": "in_progress", "output": []any{}}})
	var item map[string]any
	if t.Tool != "" {
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
			"name": t.Tool, "arguments": string(t.Input), "status": "completed"}
	} else {
		text := t.Text
		if t.Output != nil {
			text = string(t.Output)
		}
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_%d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
		sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0,
			"item": map[string]any{"type": "message", "id": item["id"], "role": "assistant", "status": "in_progress", "content": []any{}}})
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0, "delta": text})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "status": "completed", "output": []any{item},
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]int{"cached_tokens": 40},
			"output_tokens": 20, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 120},
	}})
}

// chat serves POST /v1/chat/completions (OpenAI chat completions,
// streaming), as OpenCode's openai-compatible provider speaks it. The turn
// is the number of assistant messages in the request.
func (s *server) chat(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		s.log(r, -1)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
		Tools []json.RawMessage `json:"tools"`
	}
	json.Unmarshal(s.readBody(r), &req)
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	var t Turn
	if len(req.Tools) == 0 {
		// A side request without tools (OpenCode's session title): answer
		// it without spending a scripted turn.
		n, t = -2, Turn{Text: "Scripted session"}
	} else {
		t = s.turn(n)
	}
	s.log(r, n)
	if s.fail(w, r, t, openaiErrors) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	id := fmt.Sprintf("chatcmpl-%d", n)
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": "scripted-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		if usage != nil {
			c["usage"] = usage
		}
		sse(w, "", c)
	}
	usage := map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
		"prompt_tokens_details": map[string]int{"cached_tokens": 40}}
	if t.Tool != "" {
		chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", n),
			"type": "function", "function": map[string]any{"name": t.Tool, "arguments": string(t.Input)}}}}, nil, nil)
		chunk(map[string]any{}, "tool_calls", usage)
	} else {
		text := t.Text
		if t.Output != nil {
			text = string(t.Output)
		}
		chunk(map[string]any{"role": "assistant", "content": text}, nil, nil)
		chunk(map[string]any{}, "stop", usage)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// gemini serves POST /v1beta/models/<model>:streamGenerateContent?alt=sse
// (Gemini API, streaming), as Gemini CLI speaks it. The turn is the number
// of model turns in the request's contents; a request without tools is a
// side request, answered without spending a turn.
func (s *server) gemini(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, ":streamGenerateContent") {
		s.log(r, -1)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, ":countTokens") {
			fmt.Fprint(w, `{"totalTokens": 100}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error": {"code": 404, "message": "not scripted", "status": "NOT_FOUND"}}`)
		return
	}
	var req struct {
		Contents []struct {
			Role string `json:"role"`
		} `json:"contents"`
		Tools []json.RawMessage `json:"tools"`
	}
	json.Unmarshal(s.readBody(r), &req)
	n := 0
	for _, c := range req.Contents {
		if c.Role == "model" {
			n++
		}
	}
	var t Turn
	if len(req.Tools) == 0 {
		n, t = -2, Turn{Text: "{}"}
	} else {
		t = s.turn(n)
	}
	s.log(r, n)
	if s.fail(w, r, t, geminiError) {
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var parts []any
	if t.Tool != "" {
		var args any
		json.Unmarshal(t.Input, &args)
		if t.Text != "" {
			parts = append(parts, map[string]any{"text": t.Text})
		}
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": t.Tool, "args": args}})
	} else {
		text := t.Text
		if t.Output != nil {
			text = string(t.Output)
		}
		parts = append(parts, map[string]any{"text": text})
	}
	sse(w, "", map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 20, "cachedContentTokenCount": 40, "totalTokenCount": 120},
		"modelVersion":  "scripted-model",
	})
}

// reload reads the script's file again (--reload) and, when it changed,
// starts over from its first session. A file that cannot be read or
// parsed leaves the script as it was. Called with s.mu held.
func (s *server) reload() {
	data, err := os.ReadFile(s.scriptPath)
	if err != nil || bytes.Equal(data, s.scriptData) {
		return
	}
	sc, err := parseScript(data)
	if err != nil {
		return
	}
	s.script, s.scriptData, s.session, s.started = sc, data, 0, false
}
