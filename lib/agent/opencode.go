package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/treeloop/treeloop/lib/config"
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
// status, and for a rate limit its retry-after header. Snapshots are off
// (openCodeConfigContent).
type OpenCode struct{}

// Name is "opencode".
func (OpenCode) Name() string { return "opencode" }

// opencodeSpec is OpenCode's row of Specs.
var opencodeSpec = Spec{
	Name: "opencode", New: func() Backend { return OpenCode{} }, Bin: "opencode", Tokens: true, Streams: true,
	FirstEvent: "step_start", Summarize: summarizeOpenCode, SettingsProbes: opencodeProbes, SettingsFiles: opencodeSettingsFiles, Endpoint: opencodeEndpoint,
	Home: []string{"~/.local/share/opencode", "~/.config/opencode", "~/.cache/opencode", "~/.local/state/opencode"},
}

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
	if content, ok := openCodeConfigContent(lastEnv(env, "OPENCODE_CONFIG_CONTENT")); ok {
		env = append(env, "OPENCODE_CONFIG_CONTENT="+content)
	} else {
		fmt.Fprintf(req.Log, "[treeloop] OPENCODE_CONFIG_CONTENT is not a plain JSON object: OpenCode's snapshots stay on\n")
	}
	res := Result{Argv: argv, Model: req.Config.Model, CLIVersion: cliVersion(ctx, bin), AutoCompaction: CompactionOff}

	ev := &openCodeEvents{}
	pr, err := runCLI(ctx, req, argv, env, ev.line, nil)
	res.Proc = pr.Result
	if err != nil {
		return res, err
	}
	res.Usage = ev.usage
	if pr.settled(ctx, "opencode", true, &res) {
		return res, nil
	}
	if ev.status != 0 || ev.message != "" {
		res.Class, res.Message = httpErrorClass("opencode", ev.status, ev.message)
		if res.Class == ClassRateLimit && ev.retryAfter > 0 {
			res.ResetAt = time.Now().Add(ev.retryAfter).UTC().Format(time.RFC3339)
		}
		return res, nil
	}
	textAnswer("opencode", "a final text", pr.ExitCode, ev.lastText(), &res)
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

// summarizeOpenCode: OpenCode's tool uses and text parts.
func summarizeOpenCode(ev map[string]any, _ *strings.Builder) []string {
	var out viewLines
	part := obj(ev, "part")
	switch str(ev, "type") {
	case "tool_use":
		out.tool(str(part, "tool"), obj(part, "state")["input"])
	case "text":
		out.says(str(part, "text"))
	}
	return out
}

// openCodePermission is OPENCODE_PERMISSION, OpenCode's permission rules
// over the user's configuration: every tool allowed (a rule that asks would
// be refused, with nobody to ask); edits allowed and bash denied; or both
// denied (the tools go away).
func openCodePermission(mode string) string {
	switch mode {
	case config.PermissionEdits:
		return `{"edit":"allow","bash":"deny"}`
	case config.PermissionReadOnly:
		return `{"edit":"deny","bash":"deny"}`
	}
	return `{"*":"allow"}`
}

func opencodeProbes(config.Agent) [][]string { return [][]string{{"debug", "config"}} }

func opencodeSettingsFiles(home, root string) []string {
	xdg := envOr("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	return []string{filepath.Join(xdg, "opencode", "opencode.json"), filepath.Join(xdg, "opencode", "opencode.jsonc"), os.Getenv("OPENCODE_CONFIG"),
		filepath.Join(root, "opencode.json"), filepath.Join(root, "opencode.jsonc"), filepath.Join(root, ".opencode", "opencode.json"), filepath.Join(root, ".opencode", "opencode.jsonc")}
}

// opencodeProviders are the providers OpenCode knows without a
// configuration: their API and key variables.
var opencodeProviders = map[string]Endpoint{
	"openai":     {URL: "https://api.openai.com/v1", Keys: []string{"OPENAI_API_KEY"}},
	"anthropic":  {URL: "https://api.anthropic.com", Keys: []string{"ANTHROPIC_API_KEY"}},
	"google":     {URL: "https://generativelanguage.googleapis.com", Keys: []string{"GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"}},
	"openrouter": {URL: "https://openrouter.ai/api/v1", Keys: []string{"OPENROUTER_API_KEY"}},
	"groq":       {URL: "https://api.groq.com/openai/v1", Keys: []string{"GROQ_API_KEY"}},
	"mistral":    {URL: "https://api.mistral.ai/v1", Keys: []string{"MISTRAL_API_KEY"}},
}

// opencodeEndpoint: the provider of [agent] model ("provider/model"),
// its options.baseURL and options.apiKey in OpenCode's configuration
// (OPENCODE_CONFIG_CONTENT, OPENCODE_CONFIG, its JSON files), else what
// OpenCode knows of it, with a key in its variable or `opencode auth
// login`'s file.
func opencodeEndpoint(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	provider, _, ok := strings.Cut(a.Model, "/")
	if !ok {
		return Endpoint{}, false
	}
	e, known := opencodeProviders[provider]
	e.Keys, e.URLFrom, e.Login = slices.Clone(e.Keys), "the default", "opencode auth login"
	docs := [][]byte{[]byte(env.Getenv("OPENCODE_CONFIG_CONTENT"))}
	names := []string{"OPENCODE_CONFIG_CONTENT"}
	for _, f := range opencodeSettingsFiles(env.Home, root) {
		if data, err := os.ReadFile(f); err == nil && f != "" {
			docs, names = append(docs, data), append(names, f)
		}
	}
	configured := false
	for i, d := range docs {
		if !gjson.ValidBytes(d) {
			continue
		}
		p := gjson.GetBytes(d, "provider."+gjson.Escape(provider))
		if !p.Exists() {
			continue
		}
		configured = true
		if u := p.Get("options.baseURL").String(); u != "" {
			e.URL, e.URLFrom = u, names[i]
		}
		if p.Get("options.apiKey").String() != "" {
			e.KeySet = true
		}
	}
	if !known && !configured || e.URL == "" {
		return Endpoint{}, false
	}
	data := env.Getenv("XDG_DATA_HOME")
	if data == "" {
		data = filepath.Join(env.Home, ".local", "share")
	}
	if auth, err := os.ReadFile(filepath.Join(data, "opencode", "auth.json")); err == nil && gjson.GetBytes(auth, gjson.Escape(provider)).Exists() {
		e.KeySet = true
	}
	e.KeySet = e.KeySet || env.set(e.Keys...)
	if configured && !known {
		e.Keys = nil // a provider of the user's: its key, if any, is in the configuration
	}
	return e, true
}

// openCodeConfigContent is OPENCODE_CONFIG_CONTENT for a session: the
// user's (content, "" when unset) with "snapshot": false. OpenCode would
// otherwise copy the work tree into a git repository of its own under
// ~/.local/share/opencode before every step (43 of a small session's 65
// git processes), for an undo that a session kept out of its history
// (OPENCODE_DB=:memory:) never offers; the runner commits every
// iteration itself. ok is false, and content is the user's unchanged,
// when it is not a plain JSON object (OpenCode also reads comments in it,
// which a surgical edit could not keep).
func openCodeConfigContent(content string) (string, bool) {
	if strings.TrimSpace(content) == "" {
		return `{"snapshot":false}`, true
	}
	if !gjson.Valid(content) || !gjson.Parse(content).IsObject() {
		return content, false
	}
	out, err := sjson.Set(content, "snapshot", false)
	if err != nil {
		return content, false
	}
	return out, true
}

// lastEnv is the value of key in env, the last entry winning as it does
// for exec; "" when there is none.
func lastEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
