package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/sjson"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/iterdir"
)

// Gemini is the `gemini` backend: Gemini CLI in headless mode.
//
//	gemini -p "" -o stream-json --approval-mode <yolo|auto_edit|plan>
//	       --skip-trust [-m M] [extra_args...]
//
// The prompt pack arrives on stdin (the CLI prepends it to the empty -p
// prompt), the working directory is the repository, --skip-trust lets a
// headless run work in it. Gemini CLI has no structured-output flag: the
// answer is the assistant's text after its last tool call, which must be
// the output JSON itself (or that JSON alone in one json fence). The JSON
// events (init, message, tool_use, tool_result, result) go to
// events.jsonl; the result event's status and error, and the documented
// exit codes (41 authentication, 53 turn limit; 42, 44, 52 and 55 for
// refused input, sandbox, settings and workspace), classify failures.
// Chat compression is off through a system settings file (geminiSettings).
// GEMINI_CLI_NO_RELAUNCH=true keeps the session in the process the runner
// starts: without it Gemini CLI starts itself again as a child, to raise
// its heap limit, and waits for it with SIGTERM and SIGINT ignored (twice
// the start-up: 1.3 CPU s instead of 0.7 for `gemini --version` here).
type Gemini struct{}

// geminiNoRelaunch is the environment entry that keeps Gemini CLI in one
// process (the value its own relaunch gives the child).
const geminiNoRelaunch = "GEMINI_CLI_NO_RELAUNCH=true"

// Name is "gemini".
func (Gemini) Name() string { return "gemini" }

// geminiSpec is Gemini CLI's row of Specs.
var geminiSpec = Spec{
	Name: "gemini", New: func() Backend { return Gemini{} }, Bin: "gemini", Tokens: true, Streams: true,
	FirstEvent: "init", Summarize: summarizeGemini, Home: []string{"~/.gemini"},
	SettingsProbes: geminiProbes, SettingsFiles: geminiSettingsFiles, Endpoint: geminiEndpoint,
	AllowedTools: func(tools []string) []string {
		var args []string
		for _, tool := range tools {
			args = append(args, "--allowed-tools", tool)
		}
		return args
	},
}

// Gemini CLI's documented exit codes that name a failure class.
const (
	geminiExitAuth      = 41
	geminiExitTurnLimit = 53
)

// geminiExitConfig names the exit codes that mean the CLI refused to work
// with what it was given: runner errors, not the agent's.
var geminiExitConfig = map[int]string{
	42: "its input was refused",
	44: "its sandbox failed",
	52: "its settings are invalid",
	55: "the workspace is not trusted",
}

// GeminiSettingsFile is the copy, in the iteration directory, of the
// system settings a Gemini CLI session runs with.
const GeminiSettingsFile = "gemini_system_settings.json"

// geminiSystemSettingsEnv names Gemini CLI's system settings file, the
// layer that overrides the user's and the workspace's settings.
const geminiSystemSettingsEnv = "GEMINI_CLI_SYSTEM_SETTINGS_PATH"

// geminiNoCompression is model.compressionThreshold, the share of the
// model's context window past which Gemini CLI compresses the chat into a
// summary (0.5 by default): a million times the window is never reached.
const geminiNoCompression = 1e6

// geminiSettings writes the session's system settings and returns their
// path: the system settings in effect (the file
// GEMINI_CLI_SYSTEM_SETTINGS_PATH names, else Gemini CLI's own path, else
// none) with chat compression off (seed 000 §6.2, §8): Gemini CLI has no
// switch for it, only model.compressionThreshold; the system layer keeps a
// user's or a workspace's setting from lowering it again. Gemini CLI skips
// a system settings file under a directory others may write (/tmp), so the
// file is kept in a cache directory that passes its check (the user's, by
// content, one file per distinct settings), and copied into the iteration
// directory (GeminiSettingsFile) for the record. ok is false when no such
// directory exists: compression then stays on.
func geminiSettings(iterDir string) (path string, ok bool, err error) {
	src := os.Getenv(geminiSystemSettingsEnv)
	if src == "" {
		src = "/etc/gemini-cli/settings.json"
	}
	base, err := os.ReadFile(src)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(base)) == 0:
		base = []byte("{}")
	case err != nil:
		return "", false, fmt.Errorf("gemini: read the system settings %s: %w", src, err)
	case !json.Valid(base):
		return "", false, fmt.Errorf("gemini: the system settings %s are not plain JSON (treeloop adds model.compressionThreshold to them): remove their comments", src)
	}
	out, err := sjson.SetBytes(base, "model.compressionThreshold", geminiNoCompression)
	if err != nil {
		return "", false, fmt.Errorf("gemini: set model.compressionThreshold in the system settings %s: %w", src, err)
	}
	if err := os.WriteFile(filepath.Join(iterDir, GeminiSettingsFile), out, 0o644); err != nil {
		return "", false, err
	}
	dir, ok := secureCacheDir()
	if !ok {
		return "", false, nil
	}
	sum := sha256.Sum256(out)
	path = filepath.Join(dir, "gemini-system-settings-"+hex.EncodeToString(sum[:8])+".json")
	if err := fsutil.WriteAtomic(path, out, 0o644); err != nil {
		return "", false, err
	}
	return path, true, nil
}

// secureCacheDir is treeloop's directory in a user cache directory whose
// every ancestor only its owner may write, as Gemini CLI demands of a
// system settings file's: the cache of $XDG_CACHE_HOME or $HOME, else of
// the user's home in the password database (a test or an eval gives the
// runner a HOME under /tmp).
func secureCacheDir() (string, bool) {
	var roots []string
	if d, err := os.UserCacheDir(); err == nil {
		roots = append(roots, d)
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		roots = append(roots, filepath.Join(u.HomeDir, ".cache"))
	}
	for _, r := range roots {
		dir := filepath.Join(r, "treeloop")
		if os.MkdirAll(dir, 0o755) == nil && ownerWritableOnly(dir) {
			return dir, true
		}
	}
	return "", false
}

// ownerWritableOnly reports whether dir and every directory above it are
// writable by their owner alone.
func ownerWritableOnly(dir string) bool {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm()&0o022 != 0 {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// Run runs one Gemini CLI session.
func (Gemini) Run(ctx context.Context, req Request) (Result, error) {
	bin := binOr(req, "gemini")
	argv := []string{bin, "-p", "", "-o", "stream-json", "--approval-mode", geminiApprovalMode(req.Config.PermissionMode), "--skip-trust"}
	if req.Config.Model != "" {
		argv = append(argv, "-m", req.Config.Model)
	}
	argv = append(argv, req.Config.ExtraArgs...)
	settings, off, err := geminiSettings(req.IterDir)
	if err != nil {
		return Result{}, err
	}
	res := Result{Argv: argv, Model: req.Config.Model, CLIVersion: cliVersion(ctx, bin), AutoCompaction: CompactionOn}
	env := append(Env(os.Environ(), req), geminiNoRelaunch)
	if off {
		res.AutoCompaction = CompactionOff
		env = append(env, geminiSystemSettingsEnv+"="+settings)
	} else {
		fmt.Fprintf(req.Log, "[treeloop] no cache directory that only its owner may write: Gemini CLI would skip a system settings file there, so its chat compression stays on\n")
	}

	ev := &geminiEvents{}
	pr, err := runCLI(ctx, req, argv, env, ev.line, nil)
	res.Proc = pr.Result
	if err != nil {
		return res, err
	}
	res.Usage = ev.usage
	if ev.model != "" && res.Model == "" {
		res.Model = ev.model
	}
	// Settings it refuses leave Gemini CLI without an auth method: exit
	// 41, after "Invalid configuration in …"; else exit 41 is a failed
	// authentication.
	badSettings := strings.Contains(pr.head.String(), "Invalid configuration in")
	if pr.settled(ctx, "gemini", pr.ExitCode != geminiExitAuth || badSettings, &res) {
		return res, nil
	}
	switch {
	case pr.ExitCode == geminiExitAuth:
		res.Class, res.Message = ClassAuth, "gemini: authentication failed: "+oneLine(ev.failure, 300)
		return res, nil
	case geminiExitConfig[pr.ExitCode] != "":
		res.Class = ClassConfig
		res.Message = fmt.Sprintf("gemini: %s (exit %d): see executor.log and fix the Gemini CLI settings", geminiExitConfig[pr.ExitCode], pr.ExitCode)
		return res, nil
	case pr.ExitCode == geminiExitTurnLimit:
		res.Class, res.Message = ClassTurnLimit, "gemini stopped at its turn limit"
		return res, nil
	case ev.failed:
		res.Class, res.Message = httpErrorClass("gemini", geminiStatus(ev.failure), ev.failure)
		return res, nil
	}
	textAnswer("gemini", "a final answer", pr.ExitCode, &ev.text, &res)
	return res, nil
}

// geminiEvents collects the assistant's text since its last tool call,
// the usage and the result's failure.
type geminiEvents struct {
	text    answerText
	usage   iterdir.Usage
	model   string
	failed  bool
	failure string
}

func (g *geminiEvents) line(b []byte) {
	var ev struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content string `json:"content"`
		Model   string `json:"model"`
		Status  string `json:"status"`
		Error   struct {
			Message string `json:"message"`
		} `json:"error"`
		Stats struct {
			InputTokens  int64 `json:"input_tokens"`
			OutputTokens int64 `json:"output_tokens"`
			Cached       int64 `json:"cached"`
		} `json:"stats"`
	}
	if json.Unmarshal(b, &ev) != nil {
		return
	}
	switch ev.Type {
	case "init":
		g.model = ev.Model
	case "message":
		if ev.Role == "assistant" {
			g.text.WriteString(ev.Content)
		}
	case "tool_use", "tool_result":
		g.text.Reset() // only the text after the last tool call is the answer
	case "result":
		g.usage = iterdir.Usage{InputTokens: ev.Stats.InputTokens, OutputTokens: ev.Stats.OutputTokens, CachedTokens: ev.Stats.Cached}
		if ev.Status != "" && ev.Status != "success" {
			g.failed, g.failure = true, ev.Error.Message
		}
	}
}

var geminiCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"code":\s*(\d{3})`) })

// geminiStatus finds the HTTP status in a Gemini API error message.
func geminiStatus(msg string) int {
	if m := geminiCode().FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	switch {
	case strings.Contains(msg, "RESOURCE_EXHAUSTED"),
		// The CLI's own wording after a 429 (utils/errorParsing.js), for the
		// errors it formats without the status.
		strings.Contains(msg, "Please wait and try again later"),
		strings.Contains(msg, "Possible quota limitations"):
		return 429
	case strings.Contains(msg, "UNAUTHENTICATED"):
		return 401
	case strings.Contains(msg, "PERMISSION_DENIED"):
		return 403
	}
	return 0
}

// summarizeGemini: Gemini CLI streams an assistant message in pieces:
// they gather in message, shown whole (as the other CLIs' messages are)
// when the next event comes; then its tool uses and result.
func summarizeGemini(ev map[string]any, message *strings.Builder) []string {
	var out viewLines
	if str(ev, "type") == "message" && str(ev, "role") == "assistant" {
		message.WriteString(str(ev, "content"))
		return nil
	}
	out.says(message.String())
	message.Reset()
	switch str(ev, "type") {
	case "tool_use":
		out.tool(str(ev, "tool_name"), ev["parameters"])
	case "result":
		out = append(out, "result: "+str(ev, "status"))
	}
	return out
}

// geminiApprovalMode is Gemini CLI's --approval-mode: yolo, auto_edit (a
// shell command, with nobody to approve it, is refused), plan.
func geminiApprovalMode(mode string) string {
	switch mode {
	case config.PermissionEdits:
		return "auto_edit"
	case config.PermissionReadOnly:
		return "plan"
	}
	return "yolo"
}

func geminiProbes(a config.Agent) [][]string {
	return [][]string{append(append(modelArgs(a, "-m"), a.ExtraArgs...), "--help")}
}

func geminiSettingsFiles(home, root string) []string {
	return []string{filepath.Join(home, ".gemini", "settings.json"), filepath.Join(root, ".gemini", "settings.json"), "/etc/gemini-cli/settings.json"}
}

// geminiEndpoint: GOOGLE_GEMINI_BASE_URL, a key in GEMINI_API_KEY or
// GOOGLE_API_KEY (or a .env file Gemini CLI reads), or a Google login;
// not read on Vertex AI.
func geminiEndpoint(a config.Agent, root string, env EndpointEnv) (Endpoint, bool) {
	if env.set("GOOGLE_GENAI_USE_VERTEXAI") {
		return Endpoint{}, false
	}
	e := Endpoint{Keys: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Login: "gemini (sign in with Google)"}
	e.URL, e.URLFrom = env.or("GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com")
	e.KeySet = env.set(e.Keys...) || fileExists(filepath.Join(env.Home, ".gemini", "oauth_creds.json"))
	for _, f := range []string{filepath.Join(root, ".gemini", ".env"), filepath.Join(root, ".env"), filepath.Join(env.Home, ".gemini", ".env"), filepath.Join(env.Home, ".env")} {
		if data, err := os.ReadFile(f); err == nil && (strings.Contains(string(data), "GEMINI_API_KEY=") || strings.Contains(string(data), "GOOGLE_API_KEY=")) {
			e.KeySet = true
		}
	}
	return e, true
}
