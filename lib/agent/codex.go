package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/iterdir"
)

// CodexNoCompaction is the setting that keeps Codex from compacting a
// session: the largest token count it takes.
const CodexNoCompaction = "model_auto_compact_token_limit=9223372036854775807"

// Codex is the `codex` backend: Codex CLI's non-interactive mode.
//
//	codex exec --json --ephemeral --skip-git-repo-check
//	           <--dangerously-bypass-approvals-and-sandbox | --sandbox …>
//	           -C <repo> --output-schema <iter>/codex_output.schema.json
//	           -o <iter>/codex_last_message.txt [-m M] [extra_args...]
//	           -c model_auto_compact_token_limit=<max int64> -
//
// The prompt pack arrives on stdin ("-"), every call is an ephemeral
// session. The output schema (CLISchema) is sent to the model as a strict
// JSON schema; the final message, which -o writes to a file, is the
// answer. The JSONL events (thread.started, item.completed,
// turn.completed with usage, turn.failed, error) go to events.jsonl;
// failures are classified from turn.failed and error events. Custom
// endpoints are configured with extra_args such as
// `-c model_provider=<name>` and `-c model_providers.<name>.base_url=…`.
type Codex struct{}

// Name is "codex".
func (Codex) Name() string { return "codex" }

// codexSpec is Codex's row of Specs.
var codexSpec = Spec{
	Name: "codex", New: func() Backend { return Codex{} }, Bin: "codex", Tokens: true, Streams: true,
	FirstEvent: "thread.started", Summarize: summarizeCodex, Home: []string{"~/.codex"}, IterFiles: []string{CodexMessageFile},
	SettingsProbes: codexProbes, SettingsFiles: codexSettingsFiles, Endpoint: codexEndpoint,
	Helpers: []func(string) bool{func(cmd string) bool {
		// Codex snapshots the user's shell at start (a login shell
		// running a script that prints "# Snapshot file"), and a short
		// session ends before the snapshot does.
		return strings.Contains(cmd, "-lc ") && strings.Contains(cmd, "# Snapshot file")
	}},
}

// The files Codex leaves in the iteration directory.
const (
	CodexSchemaFile  = "codex_output.schema.json"
	CodexMessageFile = "codex_last_message.txt"
)

// Run runs one Codex CLI session.
func (Codex) Run(ctx context.Context, req Request) (Result, error) {
	bin := binOr(req, "codex")
	schema, err := CLISchema()
	if err != nil {
		return Result{}, err
	}
	schemaPath := filepath.Join(req.IterDir, CodexSchemaFile)
	msgPath := filepath.Join(req.IterDir, CodexMessageFile)
	if err := os.WriteFile(schemaPath, []byte(schema+"\n"), 0o644); err != nil {
		return Result{}, err
	}
	// A fresh, empty file: a stale one (or what a session left there) is
	// never read as this session's message, and under the sandbox the
	// file is bound writable (it must exist when the session starts).
	if err := os.Remove(msgPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Result{}, err
	}
	f, err := os.OpenFile(msgPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return Result{}, err
	}
	f.Close()
	argv := []string{bin, "exec", "--json", "--ephemeral", "--skip-git-repo-check"}
	argv = append(argv, codexPermissionArgs(req.Config.PermissionMode)...)
	argv = append(argv, "-C", req.Root, "--output-schema", schemaPath, "-o", msgPath)
	if req.Config.Model != "" {
		argv = append(argv, "-m", req.Config.Model)
	}
	argv = append(argv, req.Config.ExtraArgs...)
	// Automatic compaction off (seed 000 §6.2, §8): Codex has no switch,
	// only a token count past which it compacts, read from the last -c
	// that sets it; this one, after the extra arguments, is beyond any
	// context window.
	argv = append(argv, "-c", CodexNoCompaction, "-")
	res := Result{Argv: argv, Model: req.Config.Model, CLIVersion: cliVersion(ctx, bin), AutoCompaction: CompactionOff}

	ev := &codexEvents{watch: &outageWatch{}}
	pr, err := runCLI(ctx, req, argv, Env(os.Environ(), req), ev.line, ev.watch)
	res.Proc = pr.Result
	if err != nil {
		return res, err
	}
	res.Usage = ev.usage
	if pr.settled(ctx, "codex", true, &res) {
		return res, nil
	}
	if ev.failure != "" {
		res.Class, res.Message = codexErrorClass(ev.failure)
		return res, nil
	}
	data, class, msg := ReadOutputFile(msgPath)
	if class != "" {
		if class == ClassNoOutput {
			msg = fmt.Sprintf("no output: codex exited %d without a final message", pr.ExitCode)
		}
		res.Class, res.Message = class, msg
		return res, nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		res.Class, res.Message = ClassNoOutput, fmt.Sprintf("no output: codex exited %d without a final message", pr.ExitCode)
		return res, nil
	}
	res.Output = data
	return res, nil
}

// codexEvents collects what the runner needs from the JSONL stream.
type codexEvents struct {
	usage   iterdir.Usage
	failure string       // the last turn.failed or error message
	watch   *outageWatch // told Codex's retries of a provider it cannot reach
}

func (c *codexEvents) line(b []byte) {
	var ev struct {
		Type    string `json:"type"`
		Message string `json:"message"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
		Usage struct {
			InputTokens       int64 `json:"input_tokens"`
			CachedInputTokens int64 `json:"cached_input_tokens"`
			OutputTokens      int64 `json:"output_tokens"`
		} `json:"usage"`
	}
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	switch ev.Type {
	case "turn.completed":
		c.failure = "" // an error the CLI recovered from
		c.usage.InputTokens += ev.Usage.InputTokens
		c.usage.CachedTokens += ev.Usage.CachedInputTokens
		c.usage.OutputTokens += ev.Usage.OutputTokens
	case "turn.failed":
		c.failure = ev.Error.Message
	case "error":
		c.failure = ev.Message
		// "Reconnecting... waiting for network (Connection failed: …)",
		// "Reconnecting... 2/5 (unexpected status 503 …)": Codex retries;
		// waiting for the network, it does so without end.
		if strings.HasPrefix(ev.Message, "Reconnecting") && outageText(ev.Message) {
			c.watch.retrying(ev.Message, time.Now())
			return
		}
	}
	c.watch.progressed()
}

// Compiled on first use, not at every start of a program that links
// lib/agent.
var (
	codexAuth = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(401|403)\b|Unauthorized|Forbidden|invalid api key|authentication`)
	})
	codexRateLimit = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b429\b|Too Many Requests|rate[ _]limit|usage[ _]limit|quota`)
	})
)

// codexErrorClass maps a failure message to a class and one line. Codex
// passes some API errors on as the raw response body
// ({"error":{"code","message","type"}}); those read as "code: message".
func codexErrorClass(msg string) (string, string) {
	var body struct {
		Error struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(msg), &body) == nil && body.Error.Message != "" {
		msg = body.Error.Message
		if body.Error.Code != nil {
			msg = fmt.Sprint(body.Error.Code) + ": " + msg
		}
	}
	line := "codex: " + oneLine(msg, 300)
	lower := strings.ToLower(msg)
	switch {
	case codexAuth().MatchString(msg) || strings.Contains(lower, "api key"):
		return ClassAuth, line
	case codexRateLimit().MatchString(msg):
		return ClassRateLimit, line
	case strings.Contains(lower, "context window") || strings.Contains(lower, "max turns"):
		return ClassTurnLimit, line
	case outageText(msg):
		return ClassOutage, line
	}
	return ClassAPIError, line
}

// summarizeCodex: Codex's completed items, commands, messages and file
// changes.
func summarizeCodex(ev map[string]any, _ *strings.Builder) []string {
	var out viewLines
	if str(ev, "type") == "item.completed" {
		item := obj(ev, "item")
		switch str(item, "type") {
		case "command_execution":
			out = append(out, fmt.Sprintf("run: %s (exit %v)", oneLine(str(item, "command"), 120), item["exit_code"]))
		case "agent_message":
			out.says(str(item, "text"))
		case "file_change":
			out = append(out, "edit: "+oneLine(argSummary(item["changes"]), 120))
		}
	}
	return out
}

// codexPermissionArgs are Codex's sandbox and approval flags. Codex cannot
// refuse shell commands while it allows edits: under edits they run in
// its workspace-write sandbox (writes only in the repository), under
// read-only in its read-only sandbox; approvals are never asked.
func codexPermissionArgs(mode string) []string {
	switch mode {
	case config.PermissionEdits:
		return []string{"--sandbox", "workspace-write", "-c", `approval_policy="never"`}
	case config.PermissionReadOnly:
		return []string{"--sandbox", "read-only", "-c", `approval_policy="never"`}
	}
	return []string{"--dangerously-bypass-approvals-and-sandbox"}
}

func codexProbes(a config.Agent) [][]string {
	options := append(append(append([]string{"exec"}, modelArgs(a, "-m")...), a.ExtraArgs...), "--help")
	return [][]string{options, append(codexGlobalArgs(a.ExtraArgs), "mcp", "list")}
}

// codexGlobalArgs are the options of extra that Codex takes before any
// subcommand: its config overrides and profile.
func codexGlobalArgs(extra []string) []string {
	var out []string
	for i := 0; i < len(extra); i++ {
		a := extra[i]
		switch {
		case (a == "-c" || a == "--config" || a == "-p" || a == "--profile") && i+1 < len(extra):
			out = append(out, a, extra[i+1])
			i++
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "--profile="):
			out = append(out, a)
		}
	}
	return out
}

func codexSettingsFiles(home, root string) []string {
	return []string{filepath.Join(envOr("CODEX_HOME", filepath.Join(home, ".codex")), "config.toml"), filepath.Join(root, ".codex", "config.toml")}
}

// codexEndpoint: the provider [agent] extra_args (-c model_provider=…,
// -c model_providers.<name>.base_url=…, .env_key=…) or Codex's
// config.toml choose; OpenAI's by default (OPENAI_BASE_URL, a key in
// OPENAI_API_KEY or CODEX_API_KEY, or `codex login`).
func codexEndpoint(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	codexHome := env.Getenv("CODEX_HOME")
	if codexHome == "" {
		codexHome = filepath.Join(env.Home, ".codex")
	}
	settings := map[string]string{}
	from := map[string]string{}
	var doc map[string]any
	if data, err := os.ReadFile(filepath.Join(codexHome, "config.toml")); err == nil && toml.Unmarshal(data, &doc) == nil {
		flattenTOML("", doc, settings)
		for k := range settings {
			from[k] = filepath.Join(codexHome, "config.toml")
		}
	}
	for i := 0; i+1 < len(a.ExtraArgs); i++ {
		if a.ExtraArgs[i] != "-c" && a.ExtraArgs[i] != "--config" {
			continue
		}
		if k, v, ok := strings.Cut(a.ExtraArgs[i+1], "="); ok {
			settings[k], from[k] = strings.Trim(v, `"'`), "[agent] extra_args"
		}
	}
	provider := settings["model_provider"]
	if provider == "" || provider == "openai" {
		e := Endpoint{Keys: []string{"OPENAI_API_KEY", "CODEX_API_KEY"}, Login: "codex login"}
		e.URL, e.URLFrom = env.or("OPENAI_BASE_URL", "https://api.openai.com/v1")
		e.KeySet = env.set(e.Keys...) || fileExists(filepath.Join(codexHome, "auth.json"))
		return e, true
	}
	url := settings["model_providers."+provider+".base_url"]
	if url == "" {
		return Endpoint{}, false // a provider of Codex's own (a local model server): not read here
	}
	e := Endpoint{URL: url, URLFrom: from["model_providers."+provider+".base_url"], KeySet: true}
	if k := settings["model_providers."+provider+".env_key"]; k != "" {
		e.Keys, e.KeySet = []string{k}, env.set(k)
	}
	return e, true
}

// flattenTOML puts doc's string values into out by dotted key.
func flattenTOML(prefix string, doc map[string]any, out map[string]string) {
	for k, v := range doc {
		switch v := v.(type) {
		case string:
			out[prefix+k] = v
		case map[string]any:
			flattenTOML(prefix+k+".", v, out)
		}
	}
}
