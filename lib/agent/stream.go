package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/schema"
)

// binOr is the configured executable, or the CLI's own name.
func binOr(req Request, name string) string {
	if req.Config.Bin != "" {
		return req.Config.Bin
	}
	return name
}

// runCLI runs an agent CLI the way every CLI backend does: the prompt pack
// on stdin, the repository as working directory, everything it prints in
// executor.log (and the live view), its stdout, a JSON event stream, kept
// in events.jsonl and handed line by line to onLine, under the
// iteration's deadline and idle timeout, descendants killed at the end
// (unless it runs in a container). watch, when the backend's onLine tells
// it the CLI's retries, stops a CLI that has only retried its connection
// for the idle timeout (session.ended).
func runCLI(ctx context.Context, req Request, argv, env []string, onLine func([]byte), watch *outageWatch) (*session, error) {
	s := &session{watch: watch}
	if watch != nil {
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		watch.idle, watch.stop = req.IdleTimeout, stop
		defer watch.close()
	}
	split := &lineSplitter{fn: func(b []byte) {
		if len(b) > 0 && b[0] == '{' {
			s.started = true
		}
		onLine(b)
	}}
	run, err := req.command(argv, env)
	if err != nil {
		s.Result = proc.Result{ExitCode: -1}
		return s, err
	}
	spec := proc.Spec{
		Argv: run, Dir: req.Root, Env: env, Stdin: bytes.NewReader(req.Prompt),
		Log: multiWriter(req.Log, &s.head), Stdout: multiWriter(req.Events, split), Tee: req.Tee,
		Deadline: req.Deadline, IdleTimeout: req.IdleTimeout, KillEscaped: !req.InContainer, OwnNamespace: req.Sandbox != nil,
	}
	req.restartable(&spec)
	s.Result, err = proc.Run(ctx, spec)
	split.flush()
	return s, err
}

// maxLine bounds one event line; a longer one is skipped.
const maxLine = 4 << 20

// lineSplitter calls fn with every line written through it (without the
// newline); flush hands over a last line left unterminated. A line longer
// than maxLine is skipped.
type lineSplitter struct {
	fn   func([]byte)
	cur  []byte
	over bool
}

func (l *lineSplitter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !l.over {
			if len(l.cur)+len(chunk) > maxLine {
				l.over, l.cur = true, l.cur[:0]
			} else {
				l.cur = append(l.cur, chunk...)
			}
		}
		if i < 0 {
			break
		}
		if !l.over {
			l.fn(l.cur)
		}
		l.cur, l.over = l.cur[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// flush hands over a pending unterminated line, if any.
func (l *lineSplitter) flush() {
	if !l.over && len(l.cur) > 0 {
		l.fn(l.cur)
	}
	l.cur, l.over = l.cur[:0], false
}

// multiWriter copies to every non-nil writer and never fails: a full or
// broken events log must not stop the session (the capped writers record
// their own truncation).
func multiWriter(ws ...io.Writer) io.Writer {
	var keep writers
	for _, w := range ws {
		if w != nil {
			keep = append(keep, w)
		}
	}
	return keep
}

type writers []io.Writer

func (ws writers) Write(p []byte) (int, error) {
	for _, w := range ws {
		w.Write(p)
	}
	return len(p), nil
}

// maxAnswerText caps the answer text a backend collects from a CLI's event
// stream (Gemini, OpenCode): twice the largest output accepted, so an
// answer cut by the cap is invalid anyway, and a CLI that streams without
// end cannot grow agent-exec's memory.
const maxAnswerText = 2 * schema.AgentOutputMaxBytes

// answerText is an answer as it streams, kept up to maxAnswerText bytes;
// what comes beyond is counted, not kept.
type answerText struct {
	b       strings.Builder
	dropped int64
}

// WriteString appends s, as far as the cap allows.
func (a *answerText) WriteString(s string) {
	if room := maxAnswerText - a.b.Len(); len(s) > room {
		a.dropped += int64(len(s) - room)
		s = s[:room]
	}
	a.b.WriteString(s)
}

// said reports whether the answer holds more than white space.
func (a *answerText) said() bool { return a.dropped > 0 || strings.TrimSpace(a.b.String()) != "" }

// Reset empties the answer.
func (a *answerText) Reset() { a.b.Reset(); a.dropped = 0 }

// String is the answer kept.
func (a *answerText) String() string { return a.b.String() }

// Over reports whether the answer exceeded the cap: the message to give.
func (a *answerText) Over() (string, bool) {
	if a.dropped == 0 {
		return "", false
	}
	return fmt.Sprintf("the final answer is larger than %d bytes (%d more): no valid output", maxAnswerText, a.dropped), true
}
