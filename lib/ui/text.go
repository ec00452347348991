package ui

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/textclean"
)

// What the UI shows a person is text without terminal escape sequences
// (textclean.StripANSI): a guard's colour codes reach neither the page nor
// the JSON it reads. The files on disk stay as they were written, and an
// iteration's file asked for whole, without a view, is served as it is.

// clean is data without terminal escape sequences.
func clean(data []byte) []byte {
	s := string(data)
	if c := textclean.StripANSI(s); c != s {
		return []byte(c)
	}
	return data
}

// textChunk is how much of a file serveText reads at a time; a line longer
// than maxCarry is cleaned in pieces.
const (
	textChunk = 256 << 10
	maxCarry  = 1 << 20
)

// serveText writes the file f whole, cleaned line by line, never holding
// more than a chunk and one unfinished line.
func serveText(w io.Writer, f io.Reader) {
	buf := make([]byte, textChunk)
	var carry []byte
	for {
		n, err := f.Read(buf)
		carry = append(carry, buf[:n]...)
		if i := bytes.LastIndexByte(carry, '\n'); i >= 0 || len(carry) > maxCarry || err != nil {
			end := len(carry)
			if i >= 0 && err == nil {
				end = i + 1
			}
			if _, werr := w.Write(clean(carry[:end])); werr != nil {
				return
			}
			carry = append(carry[:0], carry[end:]...)
		}
		if err != nil {
			return
		}
	}
}

// cleanJSON is the JSON text data with terminal escape sequences removed
// from its strings, keys and layout kept where nothing is removed: data
// itself when none of its strings holds one (written as \u001b, \u009b
// and the like, or as a raw C1 character), which is every record the
// runner writes unless it quotes a guard's or an agent's colours.
func cleanJSON(data []byte) []byte {
	if !bytes.Contains(data, []byte(`\u00`)) && !bytes.Contains(data, []byte{0xc2}) {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return data
	}
	v, changed := cleanValue(v)
	if !changed {
		return data
	}
	out, err := jsondoc.Compact(v)
	if err != nil {
		return data
	}
	return out
}

// cleanValue strips the strings of a decoded JSON value.
func cleanValue(v any) (any, bool) {
	changed := false
	switch x := v.(type) {
	case string:
		c := textclean.StripANSI(x)
		return c, c != x
	case []any:
		for i := range x {
			var ch bool
			x[i], ch = cleanValue(x[i])
			changed = changed || ch
		}
	case map[string]any:
		for k, e := range x {
			c, ch := cleanValue(e)
			if ch {
				x[k], changed = c, true
			}
		}
	}
	return v, changed
}

// serveCompact renders the end of events.jsonl, or of executor.log where
// the CLI's events are mixed with what it printed on stderr and the
// runner's notes (at most maxEvents bytes), as agent-exec's live view
// (agent.LiveView): a line per message or tool call, the other lines as
// they are, events without a summary left out. A log without a CLI event
// stream (the command backend) is its text.
func (s *Server) serveCompact(w http.ResponseWriter, root *os.Root, dir string, f *os.File, size int64, tail int) {
	backend := iterBackend(root, dir)
	off := max(size-maxEvents, 0)
	buf := make([]byte, size-off)
	n, _ := f.ReadAt(buf, off)
	buf = buf[:n]
	if off > 0 {
		// Start at a whole line.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	text := clean(compactView(backend, buf))
	if tail >= 0 {
		text, _, _ = tailLines(bytes.NewReader(text), int64(len(text)), tail, int64(len(text)))
	}
	w.Header().Set("X-Backend", backend)
	w.Write(text)
}

// iterBackend is the backend whose session the iteration directory holds:
// agent.json's when the session has ended, else the one whose first event
// opens events.jsonl, "" when neither says (a command backend, or a CLI
// that has printed nothing yet).
func iterBackend(root *os.Root, dir string) string {
	var a iterdir.Agent
	if data, _, err := readFile(root, path.Join(dir, iterdir.AgentFile), maxRecord); err == nil && json.Unmarshal(data, &a) == nil && a.Backend != "" {
		return a.Backend
	}
	f, _, err := openFile(root, path.Join(dir, iterdir.EventsLog))
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, head)
	return agent.SniffBackend(head[:n])
}

// compactView renders a CLI's log through backend's live view. A log may
// hold the sessions of more than one backend ([agent] fallback): the view
// follows the backend whose first event opens each session.
func compactView(backend string, data []byte) []byte {
	var out bytes.Buffer
	view := liveView(backend, &out)
	for len(data) > 0 {
		line, rest, found := bytes.Cut(data, []byte{'\n'})
		data = rest
		if b := sessionStart(line); b != "" && b != backend {
			backend, view = b, liveView(b, &out)
		}
		view.Write(line)
		if found || len(line) > 0 {
			view.Write([]byte{'\n'})
		}
	}
	return out.Bytes()
}

// liveView is backend's live view writing to w, or w itself for a backend
// without one.
func liveView(backend string, w io.Writer) io.Writer {
	if agent.HasLiveView(backend) {
		return agent.LiveView(backend, w)
	}
	return w
}

// sessionStart is the backend whose first event line is, "" for any other
// line. Only a line that starts as a first event does is parsed.
func sessionStart(line []byte) string {
	rest, ok := bytes.CutPrefix(line, []byte(`{"type":"`))
	if !ok {
		return ""
	}
	typ, _, ok := bytes.Cut(rest, []byte{'"'})
	if !ok || !firstEvents[string(typ)] {
		return ""
	}
	return agent.SniffBackend(line)
}

// firstEvents are the types of the events that open a CLI's stream.
var firstEvents = func() map[string]bool {
	m := map[string]bool{}
	for _, spec := range agent.Specs {
		if spec.FirstEvent != "" {
			m[spec.FirstEvent] = true
		}
	}
	return m
}()
