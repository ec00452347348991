package agent

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/treeloop/treeloop/lib/proc"
)

// session is what runCLI saw of one agent CLI session: the process, whether
// the CLI printed an event (its session began), and the first bytes of
// its output, stdout and stderr interleaved.
type session struct {
	proc.Result
	started bool
	head    headBuffer
	watch   *outageWatch // nil for a CLI whose events show no retries
}

// headMax bounds what a session keeps of its output's beginning: a CLI that
// refuses its settings says so in its first lines.
const headMax = 16 << 10

// headBuffer keeps the first headMax bytes written to it.
type headBuffer struct{ bytes.Buffer }

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := headMax - h.Len(); room > 0 {
		h.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// A CLI's words for refusing its arguments, its settings or its
// environment, found by running each with bad ones (pinned versions in
// .ci/versions): Codex "Error loading config.toml: …" and clap's "error:
// unexpected argument …"; Claude Code commander's "error: unknown option
// …" and "Error: Settings file not found: …"; OpenCode "Error: Config file
// at … is not valid JSON(C)" and "Error: Configuration is invalid at …",
// or its usage alone for an unknown option; Gemini CLI "Unknown argument:
// …" and "Invalid configuration in …".
var refusalLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[Ee]rror\b|Unknown argument|Invalid configuration|Usage:|\S+ run \[message\.\.\]$)`)
})

// ansi matches terminal colour sequences, which some CLIs print even into
// a pipe.
var ansi = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;]*m") })

// refused reports a CLI that exited non-zero before its session began
// (no event printed): it refused its arguments, its settings or its
// environment, which is the configuration's fault, not the agent's: class
// config, a runner error (no attempt consumed, the loop stops). The
// message names the CLI's own first error line and what to fix.
func (s *session) refused(cli string) (message string, ok bool) {
	if s.started || s.ExitCode == 0 || s.ExitCode == -1 {
		return "", false
	}
	line := refusalWords(s.head.String())
	if line == "" {
		line = "no error message"
	}
	return fmt.Sprintf("%s refused its settings (exit %d before its session began): %s: fix [agent] extra_args or model in .runner/state/config.toml, or the CLI's own settings", cli, s.ExitCode, oneLine(line, 300)), true
}

// refusalWords is the line of out where a CLI says why it refused: the
// first that reads as a refusal (refusalLine), with a "Caused by:" line
// joined to it, else the first line that is not a warning or an event.
func refusalWords(out string) string {
	out = ansi().ReplaceAllString(out, "")
	lines := strings.Split(out, "\n")
	first := ""
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "{") || strings.HasPrefix(l, "WARNING:") {
			continue
		}
		if first == "" {
			first = l
		}
		if !refusalLine().MatchString(l) {
			continue
		}
		if strings.HasPrefix(l, "Usage:") || strings.HasSuffix(l, "[message..]") {
			return "it printed its usage: an option it does not take"
		}
		// Codex words a subcommand's refusal over two lines:
		// "Error: failed to load …", "Caused by:", the cause.
		for j := i + 1; j < len(lines) && j <= i+4; j++ {
			if strings.TrimSpace(lines[j]) == "Caused by:" && j+1 < len(lines) {
				return l + ": " + strings.TrimSpace(lines[j+1])
			}
		}
		// A multi-line refusal ("Invalid configuration in FILE:", then
		// the field and why) keeps its next lines.
		if strings.HasSuffix(l, ":") {
			more := []string{strings.TrimSuffix(l, ":")}
			for _, n := range lines[i+1 : min(len(lines), i+6)] {
				if n = strings.TrimSpace(n); n != "" {
					more = append(more, n)
				}
			}
			return strings.Join(more, ": ")
		}
		return l
	}
	return first
}
