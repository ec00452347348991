package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/treeloop/treeloop/lib/iterdir"
)

// Gemini is the `gemini` backend: Gemini CLI in headless mode.
//
//	gemini -p "" -o stream-json --approval-mode yolo --skip-trust
//	       [-m M] [extra_args...]
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
type Gemini struct{}

// Name is "gemini".
func (Gemini) Name() string { return "gemini" }

// StreamsEvents reports that the CLI's stdout is a JSON event stream.
func (Gemini) StreamsEvents() bool { return true }

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

// Run runs one Gemini CLI session.
func (Gemini) Run(ctx context.Context, req Request) (Result, error) {
	bin := binOr(req, "gemini")
	argv := []string{bin, "-p", "", "-o", "stream-json", "--approval-mode", "yolo", "--skip-trust"}
	if req.Config.Model != "" {
		argv = append(argv, "-m", req.Config.Model)
	}
	argv = append(argv, req.Config.ExtraArgs...)
	// Gemini CLI has no switch for its chat compression, only a threshold.
	res := Result{Argv: argv, Model: req.Config.Model, CLIVersion: cliVersion(ctx, bin), AutoCompaction: CompactionOn}

	ev := &geminiEvents{}
	pr, err := runCLI(ctx, req, argv, Env(os.Environ(), req), ev.line)
	res.Proc = pr.Result
	if err != nil {
		return res, err
	}
	res.Usage = ev.usage
	if ev.model != "" && res.Model == "" {
		res.Model = ev.model
	}
	if cl, msg := ProcessClass(pr.Result); cl != "" {
		res.Class, res.Message = cl, msg
		return res, nil
	}
	// Settings it refuses leave Gemini CLI without an auth method: exit
	// 41, after "Invalid configuration in …".
	badSettings := strings.Contains(pr.head.String(), "Invalid configuration in")
	refusal, refused := pr.refused("gemini")
	switch {
	case refused && (pr.ExitCode != geminiExitAuth || badSettings):
		res.Class, res.Message = ClassConfig, refusal
		return res, nil
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
	if msg, over := ev.text.Over(); over {
		res.Class, res.Message = ClassInvalidOutput, "gemini: "+msg
		return res, nil
	}
	text := strings.TrimSpace(ev.text.String())
	if text == "" {
		res.Class = ClassNoOutput
		res.Message = fmt.Sprintf("no output: gemini exited %d without a final answer", pr.ExitCode)
		return res, nil
	}
	res.Output = []byte(unfence(text))
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
