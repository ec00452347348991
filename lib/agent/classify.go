package agent

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/treeloop/treeloop/lib/proc"
)

// ProcessClass classifies a process end the runner caused: timeout, hang,
// interruption. "" when the process ended by itself.
func ProcessClass(pr proc.Result) (class, message string) {
	switch {
	case pr.Canceled:
		return ClassInterrupted, "agent interrupted"
	case pr.TimedOut:
		return ClassTimeout, "agent timed out: the iteration's budget ended"
	case pr.Idle:
		return ClassHang, "agent hung: no output for agent_idle_timeout_secs"
	}
	return "", ""
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

// settled classifies, the same for every CLI backend, a session that
// leaves no answer to read: one the runner ended, or that ended while its
// CLI retried a provider it could not reach (ended); else one whose CLI
// exited non-zero before its session began (refused: class config), when
// refusal says that exit is a refusal of its settings. It sets res's class
// and message and reports whether it did.
func (s *session) settled(ctx context.Context, cli string, refusal bool, res *Result) bool {
	if cl, msg := s.ended(ctx, cli); cl != "" {
		res.Class, res.Message = cl, msg
		return true
	}
	if msg, ok := s.refused(cli); ok && refusal {
		res.Class, res.Message = ClassConfig, msg
		return true
	}
	return false
}
