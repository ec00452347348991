package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/iterdir"
)

// OpenCode is the `opencode` backend: `opencode run`.
//
//	opencode run --format json [-m provider/model] [extra_args...]
//
// The prompt pack arrives on stdin, the working directory is the
// repository, OPENCODE_DB=:memory: keeps every session out of the user's
// history, and OPENCODE_PERMISSION sets what its tools may do
// ([agent] permission_mode). OpenCode has no structured-output flag, so the answer is
// the text of the session's last step, which must be the output JSON
// itself (or that JSON alone in one fenced code block); it is validated
// like any other. The JSON events (step_start, text, tool_use,
// step_finish, error) go to events.jsonl; error events carry the HTTP
// status, and for a rate limit its retry-after header.
type OpenCode struct{}

// Name is "opencode".
func (OpenCode) Name() string { return "opencode" }

// Run runs one OpenCode session.
func (OpenCode) Run(ctx context.Context, req Request) (Result, error) {
	bin := binOr(req, "opencode")
	argv := []string{bin, "run", "--format", "json"}
	if req.Config.Model != "" {
		argv = append(argv, "-m", req.Config.Model)
	}
	argv = append(argv, req.Config.ExtraArgs...)
	// Automatic context compaction off (seed 000 §6.2, §8).
	env := append(Env(os.Environ(), req), "OPENCODE_DB=:memory:", "OPENCODE_DISABLE_AUTOCOMPACT=true",
		"OPENCODE_PERMISSION="+openCodePermission(req.Config.PermissionMode))
	res := Result{Argv: argv, Model: req.Config.Model, CLIVersion: cliVersion(ctx, bin), AutoCompaction: CompactionOff}

	ev := &openCodeEvents{}
	pr, err := runCLI(ctx, req, argv, env, ev.line, nil)
	res.Proc = pr.Result
	if err != nil {
		return res, err
	}
	res.Usage = ev.usage
	if cl, msg := pr.ended(ctx, "opencode"); cl != "" {
		res.Class, res.Message = cl, msg
		return res, nil
	}
	if msg, ok := pr.refused("opencode"); ok {
		res.Class, res.Message = ClassConfig, msg
		return res, nil
	}
	if ev.status != 0 || ev.message != "" {
		res.Class, res.Message = httpErrorClass("opencode", ev.status, ev.message)
		if res.Class == ClassRateLimit && ev.retryAfter > 0 {
			res.ResetAt = time.Now().Add(ev.retryAfter).UTC().Format(time.RFC3339)
		}
		return res, nil
	}
	answer := ev.lastText()
	if msg, over := answer.Over(); over {
		res.Class, res.Message = ClassInvalidOutput, "opencode: "+msg
		return res, nil
	}
	text := strings.TrimSpace(answer.String())
	if text == "" {
		res.Class = ClassNoOutput
		res.Message = fmt.Sprintf("no output: opencode exited %d without a final text", pr.ExitCode)
		return res, nil
	}
	res.Output = []byte(unfence(text))
	return res, nil
}

// openCodeEvents collects the text of the current step and of the last
// step that said anything (each capped), usage and the last error.
type openCodeEvents struct {
	cur, last  *answerText
	usage      iterdir.Usage
	status     int
	message    string
	retryAfter time.Duration
}

func (o *openCodeEvents) line(b []byte) {
	var ev struct {
		Type string `json:"type"`
		Part struct {
			Type   string  `json:"type"`
			Text   string  `json:"text"`
			Cost   float64 `json:"cost"`
			Tokens struct {
				Input  int64 `json:"input"`
				Output int64 `json:"output"`
				Cache  struct {
					Read int64 `json:"read"`
				} `json:"cache"`
			} `json:"tokens"`
		} `json:"part"`
		Error struct {
			Name string `json:"name"`
			Data struct {
				Message         string            `json:"message"`
				StatusCode      int               `json:"statusCode"`
				ResponseHeaders map[string]string `json:"responseHeaders"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	switch ev.Type {
	case "step_start":
		if o.cur != nil && o.cur.said() {
			o.last = o.cur
		}
		o.cur = &answerText{}
	case "text":
		if o.cur == nil {
			o.cur = &answerText{}
		}
		o.cur.WriteString(ev.Part.Text)
	case "step_finish":
		o.usage.InputTokens += ev.Part.Tokens.Input + ev.Part.Tokens.Cache.Read
		o.usage.OutputTokens += ev.Part.Tokens.Output
		o.usage.CachedTokens += ev.Part.Tokens.Cache.Read
		o.usage.CostUSD += ev.Part.Cost
	case "error":
		o.status, o.message = ev.Error.Data.StatusCode, ev.Error.Data.Message
		if o.message == "" {
			o.message = ev.Error.Name
		}
		if s, err := strconv.Atoi(strings.TrimSpace(ev.Error.Data.ResponseHeaders["retry-after"])); err == nil && s > 0 {
			o.retryAfter = time.Duration(s) * time.Second
		}
	}
}

// lastText is the text of the last step that said anything.
func (o *openCodeEvents) lastText() *answerText {
	switch {
	case o.cur != nil && o.cur.said():
		return o.cur
	case o.last != nil:
		return o.last
	}
	return &answerText{}
}

// unfence returns the body of text when text is exactly one fenced code
// block (```json … ```), else text unchanged.
func unfence(text string) string {
	if !strings.HasPrefix(text, "```") || !strings.HasSuffix(text, "```") || len(text) < 6 {
		return text
	}
	body := strings.TrimSuffix(text[3:], "```")
	nl := strings.IndexByte(body, '\n')
	if nl < 0 || strings.Contains(body, "```") {
		return text
	}
	if lang := strings.TrimSpace(body[:nl]); lang != "" && lang != "json" {
		return text
	}
	return strings.TrimSpace(body[nl+1:])
}

// httpErrorClass maps an HTTP status and message to a class and one line:
// a 5xx, or no answer at all in the CLI's words, is an outage.
func httpErrorClass(cli string, status int, msg string) (string, string) {
	line := fmt.Sprintf("%s: %s", cli, oneLine(msg, 300))
	if status != 0 {
		line = fmt.Sprintf("%s: HTTP %d: %s", cli, status, oneLine(msg, 300))
	}
	switch {
	case status == 401 || status == 403:
		return ClassAuth, line
	case status == 429:
		return ClassRateLimit, line
	case outageStatus(status), status == 0 && outageText(msg):
		return ClassOutage, line
	}
	return ClassAPIError, line
}
