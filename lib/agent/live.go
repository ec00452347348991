package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// LiveView is agent-exec's live view of a CLI that streams JSON events:
// one line on w per tool call or message ("claude: tool Bash: make test",
// "codex: says: Done."), the CLI's other output lines as they are, and
// nothing for events without a summary.
func LiveView(backend string, w io.Writer) io.Writer {
	var message strings.Builder // Gemini CLI's message so far
	return &lineSplitter{fn: func(line []byte) {
		if len(line) == 0 {
			return
		}
		if line[0] != '{' {
			fmt.Fprintf(w, "%s\n", line)
			return
		}
		for _, s := range summarize(backend, line, &message) {
			fmt.Fprintf(w, "%s: %s\n", backend, s)
		}
	}}
}

// summarize gives the view's lines for one event. Gemini CLI streams an
// assistant message in pieces: they gather in message, shown whole (as
// the other CLIs' messages are) when the next event comes.
func summarize(backend string, line []byte, message *strings.Builder) []string {
	var ev map[string]any
	if json.Unmarshal(line, &ev) != nil {
		return nil
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	obj := func(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }
	var out []string
	tool := func(name string, input any) {
		out = append(out, "tool "+name+": "+oneLine(argSummary(input), 120))
	}
	says := func(text string) {
		if strings.TrimSpace(text) != "" {
			out = append(out, "says: "+oneLine(text, 120))
		}
	}
	switch backend {
	case "claude":
		if str(ev, "type") == "assistant" {
			content, _ := obj(ev, "message")["content"].([]any)
			for _, c := range content {
				c, _ := c.(map[string]any)
				switch str(c, "type") {
				case "tool_use":
					tool(str(c, "name"), c["input"])
				case "text":
					says(str(c, "text"))
				}
			}
		}
	case "codex":
		if str(ev, "type") == "item.completed" {
			item := obj(ev, "item")
			switch str(item, "type") {
			case "command_execution":
				out = append(out, fmt.Sprintf("run: %s (exit %v)", oneLine(str(item, "command"), 120), item["exit_code"]))
			case "agent_message":
				says(str(item, "text"))
			case "file_change":
				out = append(out, "edit: "+oneLine(argSummary(item["changes"]), 120))
			}
		}
	case "opencode":
		part := obj(ev, "part")
		switch str(ev, "type") {
		case "tool_use":
			tool(str(part, "tool"), obj(part, "state")["input"])
		case "text":
			says(str(part, "text"))
		}
	case "gemini":
		if str(ev, "type") == "message" && str(ev, "role") == "assistant" {
			message.WriteString(str(ev, "content"))
			return nil
		}
		says(message.String())
		message.Reset()
		switch str(ev, "type") {
		case "tool_use":
			tool(str(ev, "tool_name"), ev["parameters"])
		case "result":
			out = append(out, "result: "+str(ev, "status"))
		}
	}
	return out
}

// argSummary is a tool input's most telling argument (a command, a path),
// else its JSON.
func argSummary(input any) string {
	if m, ok := input.(map[string]any); ok {
		for _, k := range []string{"command", "cmd", "file_path", "filePath", "path", "pattern", "url"} {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
	}
	b, _ := json.Marshal(input)
	return string(b)
}

// SniffBackend names the CLI whose JSON event stream starts with head (the
// stream's first bytes): each opens with an event of its own type, Claude
// Code "system" (init), Codex "thread.started", OpenCode "step_start",
// Gemini CLI "init"; "" when head says none of them. It lets a reader
// render the events of a session still running, before agent.json names
// the backend.
func SniffBackend(head []byte) string {
	for _, line := range bytes.Split(head, []byte{'\n'}) {
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &ev) != nil {
			return ""
		}
		switch ev.Type {
		case "system":
			return "claude"
		case "thread.started":
			return "codex"
		case "step_start":
			return "opencode"
		case "init":
			return "gemini"
		}
		return ""
	}
	return ""
}
