package agent

import (
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/proc"
)

// TestRefusalWords: each CLI's refusal, as the pinned CLIs print it with
// bad arguments or settings, is found past their warnings and worded on
// one line.
func TestRefusalWords(t *testing.T) {
	for _, tt := range []struct{ name, out, want string }{
		{"codex config.toml",
			"WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries\nError loading config.toml: model_providers.fake: provider name must not be empty\nin `model_providers`\n",
			"Error loading config.toml: model_providers.fake: provider name must not be empty"},
		{"codex option",
			"WARNING: proceeding\nerror: unexpected argument '--bogus-flag' found\n\n  tip: to pass '--bogus-flag' as a value, use '-- --bogus-flag'\n\nUsage: codex exec [OPTIONS] [PROMPT]\n",
			"error: unexpected argument '--bogus-flag' found"},
		{"codex subcommand",
			"WARNING: proceeding\nError: failed to load bootstrap configuration\n\nCaused by:\n    model_providers.fake: provider name must not be empty\n",
			"Error: failed to load bootstrap configuration: model_providers.fake: provider name must not be empty"},
		{"claude option", "error: unknown option '--bogus-flag'\n", "error: unknown option '--bogus-flag'"},
		{"claude settings", "Error: Settings file not found: /nonexistent.json\n", "Error: Settings file not found: /nonexistent.json"},
		{"opencode config",
			"\x1b[91m\x1b[1mError: \x1b[0mConfig file at OPENCODE_CONFIG_CONTENT is not valid JSON(C): \n--- JSONC Input ---\n{bad\n",
			"Error: Config file at OPENCODE_CONFIG_CONTENT is not valid JSON(C)"},
		{"opencode option", "opencode run [message..]\n\nrun opencode with a message\n\nPositionals:\n", "it printed its usage: an option it does not take"},
		{"gemini option", "Unknown argument: bogus\nUsage: gemini [options] [command]\n", "Unknown argument: bogus"},
		{"gemini settings",
			"Invalid configuration in /home/u/.gemini/settings.json:\n\nError in: general.maxAttempts\n    Expected number, received string\n",
			"Invalid configuration in /home/u/.gemini/settings.json: Error in: general.maxAttempts: Expected number, received string"},
		{"anything else", "{\"type\":\"x\"}\nnode: not found\n", "node: not found"},
		// No line reads as a refusal: the first plain line says why, not
		// the last.
		{"several plain lines", "WARNING: x\n/usr/bin/env: 'node': No such file or directory\nexit status 127\n", "/usr/bin/env: 'node': No such file or directory"},
	} {
		got := refusalWords(tt.out)
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: refusalWords = %q, want it to start %q", tt.name, got, tt.want)
		}
	}
}

// TestRefused: only a CLI that exits non-zero before its first event is a
// refusal; a session that began, or one that could not start at all, is
// not.
func TestRefused(t *testing.T) {
	s := &session{Result: proc.Result{ExitCode: 1}}
	s.head.WriteString("Error loading config.toml: bad\n")
	if msg, ok := s.refused("codex"); !ok || !strings.Contains(msg, "codex refused its settings (exit 1 before its session began): Error loading config.toml: bad: fix [agent] extra_args") {
		t.Errorf("refused = %q, %v", msg, ok)
	}
	s.started = true
	if _, ok := s.refused("codex"); ok {
		t.Error("a session that printed an event is not a refusal")
	}
	for _, code := range []int{0, -1} {
		if _, ok := (&session{Result: proc.Result{ExitCode: code}}).refused("codex"); ok {
			t.Errorf("exit %d is not a refusal", code)
		}
	}
}

// TestSettled: the runner's end of a session comes first, then a refusal
// where the backend counts its exit as one (Gemini CLI's exit 41 is one
// only after "Invalid configuration in …"); a session that ran to its end
// is left to the backend.
func TestSettled(t *testing.T) {
	refusing := &session{Result: proc.Result{ExitCode: 41}}
	var res Result
	if !refusing.settled(t.Context(), "gemini", true, &res) || res.Class != ClassConfig || !strings.HasPrefix(res.Message, "gemini refused its settings (exit 41") {
		t.Errorf("a refusal: %q %q", res.Class, res.Message)
	}
	res = Result{}
	if refusing.settled(t.Context(), "gemini", false, &res) || res.Class != "" {
		t.Errorf("an exit the backend reads itself: %q", res.Class)
	}
	timedOut := &session{Result: proc.Result{ExitCode: 1, TimedOut: true}}
	if !timedOut.settled(t.Context(), "codex", true, &res) || res.Class != ClassTimeout {
		t.Errorf("a timeout: %q", res.Class)
	}
	res = Result{}
	if (&session{Result: proc.Result{ExitCode: 1}, started: true}).settled(t.Context(), "claude", true, &res) || res.Class != "" {
		t.Errorf("a session that began: %q", res.Class)
	}
}
