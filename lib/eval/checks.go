package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/treeloop/treeloop/lib/proc"
)

// CheckResult is one check's verdict (STYLE.md: {name, pass, reason}),
// an entry of checks.json.
type CheckResult struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Pass       bool   `json:"pass"`
	Reason     string `json:"reason"`              // why it passed or failed, one line
	Output     string `json:"output,omitempty"`    // command_succeeds: the tail of its output
	DurationMS int64  `json:"duration_ms"`         // time the check took
	ExitCode   *int   `json:"exit_code,omitempty"` // command_succeeds
}

// CheckEnv is what the checks see of the finished attempt.
type CheckEnv struct {
	Workspace    string   // the work tree, absolute
	Env          []string // environment for command_succeeds
	LoopComplete bool     // runner-loop exited 0 (complete)
}

// outputTail is how much of a command's output checks.json keeps.
const outputTail = 4000

// RunChecks runs every check of c against the workspace, in order.
func RunChecks(ctx context.Context, c *Case, env CheckEnv) []CheckResult {
	out := make([]CheckResult, 0, len(c.Checks))
	for _, ch := range c.Checks {
		start := time.Now()
		r := runCheck(ctx, ch, env)
		r.Name, r.Type = ch.Name, ch.Type
		r.DurationMS = time.Since(start).Milliseconds()
		out = append(out, r)
	}
	return out
}

func pass(format string, args ...any) CheckResult {
	return CheckResult{Pass: true, Reason: fmt.Sprintf(format, args...)}
}

func fail(format string, args ...any) CheckResult {
	return CheckResult{Reason: fmt.Sprintf(format, args...)}
}

func runCheck(ctx context.Context, ch Check, env CheckEnv) CheckResult {
	path := filepath.Join(env.Workspace, ch.Path)
	switch ch.Type {
	case FileExists:
		if _, err := os.Lstat(path); err != nil {
			return fail("%s does not exist", ch.Path)
		}
		return pass("%s exists", ch.Path)
	case FileContains:
		data, err := os.ReadFile(path)
		if err != nil {
			return fail("cannot read %s: %v", ch.Path, cause(err))
		}
		if loc := ch.re.FindIndex(data); loc != nil {
			line := 1 + bytes.Count(data[:loc[0]], []byte("\n"))
			return pass("%s matches /%s/ at line %d", ch.Path, ch.Pattern, line)
		}
		return fail("%s (%d bytes) has no match for /%s/", ch.Path, len(data), ch.Pattern)
	case CommandSucceeds:
		return runCommand(ctx, ch, env)
	case RunnerCompleted:
		t, err := loadTree(env.Workspace)
		switch {
		case err != nil:
			return fail("%v", err)
		case !env.LoopComplete:
			return fail("runner-loop did not end complete (root passes=%t)", t.Passes)
		case !t.Passes:
			return fail("runner-loop ended complete but the root does not pass")
		}
		return pass("runner-loop ended complete and the root passes")
	case JSONPath:
		data, err := os.ReadFile(path)
		if err != nil {
			return fail("cannot read %s: %v", ch.Path, cause(err))
		}
		if !gjson.ValidBytes(data) {
			return fail("%s is not valid JSON", ch.Path)
		}
		res := gjson.GetBytes(data, ch.Query)
		if ch.Exists != nil {
			if res.Exists() == *ch.Exists {
				return pass("%s: %s exists=%t", ch.Path, ch.Query, res.Exists())
			}
			return fail("%s: %s exists=%t, want %t", ch.Path, ch.Query, res.Exists(), *ch.Exists)
		}
		want, _ := canonicalJSON(ch.Equals)
		if !res.Exists() {
			return fail("%s: %s does not exist, want %s", ch.Path, ch.Query, want)
		}
		var v any
		if err := json.Unmarshal([]byte(res.Raw), &v); err != nil {
			return fail("%s: %s: %v", ch.Path, ch.Query, err)
		}
		got, _ := canonicalJSON(v)
		if got == want {
			return pass("%s: %s = %s", ch.Path, ch.Query, got)
		}
		return fail("%s: %s = %s, want %s", ch.Path, ch.Query, clip(got, 200), want)
	case TreePassedCount, TreeMaxDepth:
		t, err := loadTree(env.Workspace)
		if err != nil {
			return fail("%v", err)
		}
		n, what := t.passed(), "passed nodes"
		if ch.Type == TreeMaxDepth {
			n, what = t.depth(), "maximum depth"
		}
		if (ch.Min != nil && n < *ch.Min) || (ch.Max != nil && n > *ch.Max) {
			return fail("%s %d, want %s", what, n, bounds(ch.Min, ch.Max))
		}
		return pass("%s %d within %s", what, n, bounds(ch.Min, ch.Max))
	}
	return fail("unknown check type %q", ch.Type)
}

func bounds(lo, hi *int) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("[%d, %d]", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf(">= %d", *lo)
	default:
		return fmt.Sprintf("<= %d", *hi)
	}
}

// checkGrace is how long a command_succeeds check that outlived its
// timeout, or an interrupted eval, gives its process group between
// SIGTERM and SIGKILL.
const checkGrace = 2 * time.Second

// runCommand runs a command_succeeds check in its own process group
// (lib/proc), stopped with its whole group when its timeout runs out or
// the eval is interrupted.
func runCommand(ctx context.Context, ch Check, env CheckEnv) CheckResult {
	var buf bytes.Buffer
	res, err := proc.Run(ctx, proc.Spec{
		Argv:     ch.Cmd,
		Dir:      env.Workspace,
		Env:      env.Env,
		Log:      &buf,
		Deadline: time.Now().Add(time.Duration(ch.TimeoutSecs) * time.Second),
		Grace:    checkGrace,
	})
	if err != nil {
		return fail("cannot start %s: %v", ch.Cmd[0], startCause(err))
	}
	r := CheckResult{Output: tail(buf.String(), outputTail)}
	code := res.ExitCode
	r.ExitCode = &code
	switch {
	case res.TimedOut:
		r.Reason = fmt.Sprintf("%s did not finish within %ds", ch.Cmd[0], ch.TimeoutSecs)
	case res.Canceled:
		r.Reason = fmt.Sprintf("%s was stopped: the eval was interrupted", ch.Cmd[0])
	case code == 0:
		r.Pass, r.Reason = true, fmt.Sprintf("%s exited 0", ch.Cmd[0])
	default:
		r.Reason = fmt.Sprintf("%s exited %d", ch.Cmd[0], code)
		if l := lastLine(buf.String()); l != "" {
			r.Reason += ": " + clip(l, 200)
		}
	}
	return r
}

// startCause is why a program could not start, without its name (the
// reason names it): "executable file not found in $PATH".
func startCause(err error) error {
	var se *proc.StartError
	if !errors.As(err, &se) {
		return err
	}
	var ee *exec.Error
	if errors.As(se.Err, &ee) {
		return ee.Err
	}
	return cause(se.Err)
}

// node is the part of a task tree node the tree checks read.
type node struct {
	Passes   bool   `json:"passes"`
	Children []node `json:"children"`
}

func loadTree(ws string) (node, error) {
	var t node
	data, err := os.ReadFile(filepath.Join(ws, ".runner", "state", "tree.json"))
	if err != nil {
		return t, fmt.Errorf("cannot read .runner/state/tree.json: %v", cause(err))
	}
	if err := json.Unmarshal(data, &t); err != nil {
		return t, fmt.Errorf(".runner/state/tree.json: %v", err)
	}
	return t, nil
}

func (n node) passed() int {
	c := 0
	if n.Passes {
		c = 1
	}
	for _, ch := range n.Children {
		c += ch.passed()
	}
	return c
}

func (n node) depth() int {
	d := 0
	for _, ch := range n.Children {
		d = max(d, 1+ch.depth())
	}
	return d
}

// canonicalJSON encodes v with sorted keys (encoding/json sorts map keys),
// numbers as JSON numbers whatever their Go type.
func canonicalJSON(v any) (string, error) {
	b, err := jsondoc.Compact(v)
	if err != nil {
		return "", err
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return "", err
	}
	b, err = jsondoc.Compact(x)
	return string(b), err
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// LastLine is the last non-empty line of s, trimmed (for reasons).
func LastLine(s string) string { return lastLine(s) }
