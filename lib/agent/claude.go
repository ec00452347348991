package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/iterdir"
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

// claudeSpec is Claude Code's row of Specs.
var claudeSpec = Spec{
	Name: "claude", New: func() Backend { return Claude{} }, Bin: "claude", Tokens: true, Cost: true, Streams: true,
	FirstEvent: "system", Summarize: summarizeClaude, Home: []string{"~/.claude", "~/.claude.json"},
	SettingsProbes: claudeProbes, SettingsFiles: claudeSettingsFiles, Endpoint: claudeEndpoint,
	AllowedTools: func(tools []string) []string { return []string{"--allowedTools", strings.Join(tools, ",")} },
}

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
	if pr.settled(ctx, "claude", true, &res) {
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

// summarizeClaude: Claude Code's assistant messages, their tool calls
// and text.
func summarizeClaude(ev map[string]any, _ *strings.Builder) []string {
	var out viewLines
	if str(ev, "type") == "assistant" {
		content, _ := obj(ev, "message")["content"].([]any)
		for _, c := range content {
			c, _ := c.(map[string]any)
			switch str(c, "type") {
			case "tool_use":
				out.tool(str(c, "name"), c["input"])
			case "text":
				out.says(str(c, "text"))
			}
		}
	}
	return out
}

// claudePermissionMode is Claude Code's --permission-mode: bypassPermissions,
// acceptEdits (a Bash call, with nobody to approve it, is denied), plan.
func claudePermissionMode(mode string) string {
	switch mode {
	case config.PermissionEdits:
		return "acceptEdits"
	case config.PermissionReadOnly:
		return "plan"
	}
	return "bypassPermissions"
}

func claudeProbes(a config.Agent) [][]string {
	return [][]string{append(append(append([]string{"-p"}, modelArgs(a, "--model")...), a.ExtraArgs...), "--help")}
}

func claudeSettingsFiles(home, root string) []string {
	dir := envOr("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
	return []string{filepath.Join(dir, "settings.json"), filepath.Join(home, ".claude.json"), filepath.Join(root, ".claude", "settings.json"), filepath.Join(root, ".claude", "settings.local.json")}
}

// claudeEndpoint: ANTHROPIC_BASE_URL, a key in ANTHROPIC_API_KEY,
// ANTHROPIC_AUTH_TOKEN or CLAUDE_CODE_OAUTH_TOKEN (or the "env" of Claude
// Code's settings files), an apiKeyHelper, or `claude` logged in; not
// read on Bedrock or Vertex.
func claudeEndpoint(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	vars := map[string]string{}
	helper := false
	for _, f := range claudeSettingsFiles(env.Home, root) {
		data, err := os.ReadFile(f)
		if err != nil || !gjson.ValidBytes(data) {
			continue
		}
		gjson.GetBytes(data, "env").ForEach(func(k, v gjson.Result) bool {
			vars[k.String()] = v.String()
			return true
		})
		helper = helper || gjson.GetBytes(data, "apiKeyHelper").String() != ""
	}
	get := func(n string) string {
		if v := env.Getenv(n); v != "" {
			return v
		}
		return vars[n]
	}
	e2 := EndpointEnv{Getenv: get, Home: env.Home}
	if e2.set("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX") {
		return Endpoint{}, false
	}
	e := Endpoint{Keys: []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}, Login: "claude, then /login"}
	e.URL, e.URLFrom = e2.or("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
	dir := env.Getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(env.Home, ".claude")
	}
	e.KeySet = e2.set(e.Keys...) || helper || fileExists(filepath.Join(dir, ".credentials.json"))
	return e, true
}
