package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/schemas"
)

// Claude is the `claude` backend: Claude Code in print mode.
//
//	claude -p --output-format stream-json --verbose --no-session-persistence
//	       --permission-mode <bypassPermissions|acceptEdits|plan>
//	       --json-schema <CLISchema> [--model M] [extra_args...]
//
// The prompt pack arrives on stdin, the working directory is the
// repository, every call is a fresh session that is not persisted. The
// JSONL event stream goes to events.jsonl; the last event, type "result",
// carries the answer in structured_output (the agent output schema is
// enforced by the CLI's StructuredOutput tool), is_error, usage and cost.
// Free text is never searched for a completion phrase. The permission mode
// follows [agent] permission_mode (full, edits, read-only). As root,
// Claude Code refuses bypassPermissions unless IS_SANDBOX=1, which is set.
type Claude struct{}

// Name is "claude".
func (Claude) Name() string { return "claude" }

// Run runs one Claude Code session.
func (c Claude) Run(ctx context.Context, req Request) (Result, error) {
	bin := binOr(req, "claude")
	schema, err := CLISchema()
	if err != nil {
		return Result{}, err
	}
	argv := []string{bin, "-p", "--output-format", "stream-json", "--verbose",
		"--no-session-persistence", "--permission-mode", claudePermissionMode(req.Config.PermissionMode),
		"--json-schema", schema}
	if req.Config.Model != "" {
		argv = append(argv, "--model", req.Config.Model)
	}
	argv = append(argv, req.Config.ExtraArgs...)
	// Automatic context compaction off (seed 000 §6.2, §8): a session
	// works from the prompt pack, never from a summary of itself.
	env := append(Env(os.Environ(), req), "DISABLE_AUTO_COMPACT=true")
	if os.Geteuid() == 0 {
		env = append(env, "IS_SANDBOX=1")
	}
	res := Result{Argv: argv, Model: req.Config.Model, CLIVersion: cliVersion(ctx, bin), AutoCompaction: CompactionOff}

	var line []byte       // the last result event
	var retryAt time.Time // when the CLI meant to retry after its last 429
	watch := &outageWatch{}
	pr, err := runCLI(ctx, req, argv, env, func(b []byte) {
		switch {
		case bytes.HasPrefix(b, []byte(`{"type":"result"`)):
			line = append(line[:0], b...)
		case bytes.HasPrefix(b, []byte(`{"type":"system","subtype":"api_retry"`)):
			if t, ok := claudeRetryAt(b, time.Now()); ok {
				retryAt = t
			}
			if words, ok := claudeOutageRetry(b); ok {
				watch.retrying(words, time.Now())
				return
			}
		}
		watch.progressed()
	}, watch)
	res.Proc = pr.Result
	if err != nil {
		return res, err
	}
	if cl, msg := pr.ended(ctx, "claude"); cl != "" {
		res.Class, res.Message = cl, msg
		return res, nil
	}
	if msg, ok := pr.refused("claude"); ok {
		res.Class, res.Message = ClassConfig, msg
		return res, nil
	}
	if line == nil {
		res.Class = ClassNoOutput
		res.Message = fmt.Sprintf("no output: claude exited %d without a result event", pr.ExitCode)
		return res, nil
	}
	var ev claudeResult
	if err := json.Unmarshal(line, &ev); err != nil {
		res.Class, res.Message = ClassNoOutput, "no output: claude's result event is not JSON: "+err.Error()
		return res, nil
	}
	res.Usage = iterdir.Usage{
		InputTokens:  ev.Usage.InputTokens + ev.Usage.CacheCreationInputTokens + ev.Usage.CacheReadInputTokens,
		OutputTokens: ev.Usage.OutputTokens,
		CachedTokens: ev.Usage.CacheReadInputTokens,
		CostUSD:      ev.TotalCostUSD,
	}
	if res.Model == "" && len(ev.ModelUsage) == 1 {
		for m := range ev.ModelUsage {
			res.Model = m
		}
	}
	if ev.IsError { // judged by is_error, not subtype
		res.Class, res.Message = claudeErrorClass(ev.Subtype, ev.APIErrorStatus, ev.Result)
		if res.Class == ClassRateLimit {
			res.ResetAt = claudeResetAt(ev.Result, retryAt)
		}
		return res, nil
	}
	if len(ev.StructuredOutput) == 0 || string(ev.StructuredOutput) == "null" {
		res.Class, res.Message = ClassNoOutput, "no output: claude gave no structured output"
		if n := len(ev.PermissionDenials); n > 0 {
			// The session gave up after the CLI denied it tools: say so,
			// since the fix is the permission mode, not the prompt.
			res.Class = ClassPermission
			res.Message = fmt.Sprintf("claude: no structured output after %d permission denial(s), the first for %s: check --permission-mode and allowed tools in [agent] extra_args",
				n, ev.PermissionDenials[0].ToolName)
		}
		return res, nil
	}
	res.Output = ev.StructuredOutput
	return res, nil
}

// claudeErrorClass maps a failed result event to a class and one line.
func claudeErrorClass(subtype string, status *int, text string) (string, string) {
	text = oneLine(text, 300)
	switch {
	case subtype == "error_max_turns":
		return ClassTurnLimit, "claude stopped at its turn limit"
	case status != nil && (*status == 401 || *status == 403):
		return ClassAuth, fmt.Sprintf("claude: authentication failed (HTTP %d): %s", *status, text)
	case status != nil && *status == 429:
		return ClassRateLimit, fmt.Sprintf("claude: rate or usage limit (HTTP 429): %s", text)
	case status != nil && outageStatus(*status):
		return ClassOutage, fmt.Sprintf("claude: the provider failed (HTTP %d): %s", *status, text)
	case status != nil:
		return ClassAPIError, fmt.Sprintf("claude: API error (HTTP %d): %s", *status, text)
	case outageText(text):
		// No status: the request never got an answer ("API Error:
		// Unable to connect to API (ConnectionRefused)").
		return ClassOutage, "claude: " + text
	}
	return ClassAPIError, "claude: " + text
}

// claudeOutageRetry reads an api_retry event: the CLI's words when it
// retries a request that got no answer (error_status null: the connection
// failed) or the provider's own failure (5xx, 529 overloaded); ok is false
// for other retries (a 429 is a rate limit).
func claudeOutageRetry(b []byte) (string, bool) {
	var ev struct {
		Attempt     int    `json:"attempt"`
		MaxRetries  int    `json:"max_retries"`
		ErrorStatus *int   `json:"error_status"`
		Error       string `json:"error"`
	}
	if json.Unmarshal(b, &ev) != nil || (ev.ErrorStatus != nil && !outageStatus(*ev.ErrorStatus)) {
		return "", false
	}
	what := "no answer"
	if ev.ErrorStatus != nil {
		what = fmt.Sprintf("HTTP %d", *ev.ErrorStatus)
	}
	return fmt.Sprintf("API retry %d of %d (%s: %s)", ev.Attempt, ev.MaxRetries, what, ev.Error), true
}

// claudeRetryAt reads an api_retry event ({"type":"system","subtype":
// "api_retry","retry_delay_ms":N,"error_status":429,...}) received at now:
// the time Claude Code meant to retry a rate-limited request (it honours
// the server's Retry-After). ok is false for other statuses.
func claudeRetryAt(b []byte, now time.Time) (time.Time, bool) {
	var ev struct {
		RetryDelayMS float64 `json:"retry_delay_ms"`
		ErrorStatus  int     `json:"error_status"`
	}
	if json.Unmarshal(b, &ev) != nil || ev.ErrorStatus != 429 || ev.RetryDelayMS <= 0 {
		return time.Time{}, false
	}
	return now.Add(time.Duration(ev.RetryDelayMS * float64(time.Millisecond))), true
}

// claudeUsageReset finds the reset time in Claude Code's subscription
// usage-limit result ("Claude AI usage limit reached|<unix seconds>").
var claudeUsageReset = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`usage limit reached\|(\d{9,11})\b`) })

// claudeResetAt is a rate limit's reset time, RFC 3339: the usage-limit
// reset the result names, else when the CLI meant to retry after its last
// 429, else "".
func claudeResetAt(result string, retryAt time.Time) string {
	if m := claudeUsageReset().FindStringSubmatch(result); m != nil {
		if sec, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return time.Unix(sec, 0).UTC().Format(time.RFC3339)
		}
	}
	if !retryAt.IsZero() {
		return retryAt.UTC().Format(time.RFC3339)
	}
	return ""
}

// oneLine squeezes s onto one line of at most n bytes (and "…"), cut at
// a character boundary: a message or a live line stays valid UTF-8.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

// claudeResult is what the runner reads of Claude Code's result event.
type claudeResult struct {
	Subtype          string          `json:"subtype"`
	IsError          bool            `json:"is_error"`
	APIErrorStatus   *int            `json:"api_error_status"`
	Result           string          `json:"result"`
	StructuredOutput json.RawMessage `json:"structured_output"`
	TotalCostUSD     float64         `json:"total_cost_usd"`
	Usage            struct {
		InputTokens              int64 `json:"input_tokens"`
		OutputTokens             int64 `json:"output_tokens"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	ModelUsage        map[string]json.RawMessage `json:"modelUsage"`
	PermissionDenials []struct {
		ToolName string `json:"tool_name"`
	} `json:"permission_denials"`
}

// CLISchema is the agent output schema as the CLIs' structured-output
// modes take it, on one line: without "$schema", "$id" and the "allOf"
// conditional (children only with status decomposed), which Claude Code
// silently refuses (it then offers no StructuredOutput tool at all), and
// with a child's evidence required, as strict modes want every property.
// agent-exec still validates every answer against the full schema.
func CLISchema() (string, error) {
	var m map[string]any
	if err := json.Unmarshal(schemas.AgentOutputV1, &m); err != nil {
		return "", err
	}
	delete(m, "$schema")
	delete(m, "$id")
	delete(m, "allOf")
	// Strict structured output wants every property required: a child's
	// optional evidence is asked for always (witness, the default, or suite).
	if child, ok := nested(m, "properties", "children", "items").(map[string]any); ok {
		if req, ok := child["required"].([]any); ok {
			child["required"] = append(req, "evidence")
		}
	}
	b, err := jsondoc.Compact(m)
	return string(b), err
}

// nested is the value at the keys of nested objects in m, nil when a
// key is missing or a value on the way is not an object.
func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}
