// Package modelserver is a scripted model server for tests: it speaks a
// model API's wire protocol (server-sent events) on 127.0.0.1 so that the
// real agent CLIs can run against it offline. Each request's turn is the
// number of assistant messages already in the conversation; the script
// says what the model does on each turn: call a tool, give the structured
// answer, say something, fail with an HTTP status, or hang.
package modelserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"

	"github.com/alecthomas/kong"
)

// Turn is one scripted model turn. Exactly one of its fields is set.
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

// Script is the whole scripted conversation.
type Script struct {
	Turns []Turn `json:"turns"`
}

type options struct {
	Protocol string `enum:"anthropic" default:"anthropic" help:"Wire protocol: anthropic (POST /v1/messages, SSE)."`
	Script   string `required:"" type:"existingfile" help:"The script (JSON: {\"turns\": [...]})."`
	AddrFile string `required:"" help:"Write the base URL (http://127.0.0.1:PORT) here once listening."`
	Log      string `help:"Append one line per request: method, path, turn."`
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
	var sc Script
	if err := json.Unmarshal(data, &sc); err != nil || len(sc.Turns) == 0 {
		fmt.Fprintf(stderr, "modelserver: %s: want {\"turns\": [...]} with at least one turn (%v)\n", o.Script, err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 1
	}
	s := &server{script: sc, logPath: o.Log}
	url := "http://" + ln.Addr().String()
	if err := os.WriteFile(o.AddrFile+".tmp", []byte(url), 0o644); err == nil {
		err = os.Rename(o.AddrFile+".tmp", o.AddrFile)
	}
	if err != nil {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 1
	}
	if err := http.Serve(ln, http.HandlerFunc(s.anthropic)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "modelserver:", err)
		return 1
	}
	return 0
}

type server struct {
	script  Script
	logPath string
	mu      sync.Mutex
	calls   int
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
// messages; past the end, the last turn repeats.
func (s *server) turn(n int) Turn {
	if n >= len(s.script.Turns) {
		n = len(s.script.Turns) - 1
	}
	return s.script.Turns[n]
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
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &req)
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	s.log(r, n)
	t := s.turn(n)
	switch {
	case t.Hang:
		<-r.Context().Done()
		return
	case t.Status != 0:
		for k, vs := range t.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		kind := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 429: "rate_limit_error", 529: "overloaded_error"}[t.Status]
		if kind == "" {
			kind = "api_error"
		}
		json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{"type": kind, "message": t.Error}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
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
