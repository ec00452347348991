package agent

import (
	"bytes"
	"context"
	"io"

	"github.com/treeloop/treeloop/lib/proc"
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
// iteration's deadline and idle timeout, descendants killed at the end.
func runCLI(ctx context.Context, req Request, argv, env []string, onLine func([]byte)) (proc.Result, error) {
	split := &lineSplitter{fn: onLine}
	run, err := req.command(argv)
	if err != nil {
		return proc.Result{ExitCode: -1}, err
	}
	pr, err := proc.Run(ctx, proc.Spec{
		Argv: run, Dir: req.Root, Env: env, Stdin: bytes.NewReader(req.Prompt),
		Log: req.Log, Stdout: multiWriter(req.Events, split), Tee: req.Tee,
		Deadline: req.Deadline, IdleTimeout: req.IdleTimeout, KillEscaped: true,
	})
	split.flush()
	return pr, err
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
