package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/treeloop/treeloop/lib/jsondoc"
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

// summarize gives the view's lines for one event (Spec.Summarize).
func summarize(backend string, line []byte, message *strings.Builder) []string {
	spec, _ := Lookup(backend)
	if spec.Summarize == nil {
		return nil
	}
	var ev map[string]any
	if json.Unmarshal(line, &ev) != nil {
		return nil
	}
	return spec.Summarize(ev, message)
}

// str is the string at key k of m, "" when none.
func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

// obj is the object at key k of m, nil when none.
func obj(m map[string]any, k string) map[string]any { o, _ := m[k].(map[string]any); return o }

// viewLines are the live view's lines of one event.
type viewLines []string

func (l *viewLines) tool(name string, input any) {
	*l = append(*l, "tool "+name+": "+oneLine(argSummary(input), 120))
}

func (l *viewLines) says(text string) {
	if strings.TrimSpace(text) != "" {
		*l = append(*l, "says: "+oneLine(text, 120))
	}
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
	b, _ := jsondoc.Compact(input)
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
		for _, spec := range Specs {
			if spec.FirstEvent != "" && spec.FirstEvent == ev.Type {
				return spec.Name
			}
		}
		return ""
	}
	return ""
}
