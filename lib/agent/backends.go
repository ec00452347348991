package agent

import (
	"strings"

	"github.com/treeloop/treeloop/lib/config"
)

// Spec is what one backend is, in one place: how to make it, the CLI it
// runs by default, what its sessions report, whether its stdout is a JSON
// event stream and how the live view summarises each event, and what it
// needs under the sandbox. Specs lists every backend; the switches over
// backend names read it.
type Spec struct {
	Name string
	New  func() Backend
	// Bin is the executable run when [agent] bin is empty: the CLI's own
	// name; "" for command (it runs [agent] bin) and replay (it runs
	// nothing).
	Bin string
	// RunsNothing: the sessions start no process (replay).
	RunsNothing bool
	// Tokens and Cost say what the sessions report: token counts, and a
	// cost in US dollars (a replay reports what its recording holds).
	Tokens, Cost bool
	// Streams: the session's events are kept in events.jsonl (a CLI's
	// JSON event stream, a replay's recording).
	Streams bool
	// FirstEvent is the type of the first event of the CLI's stream
	// (SniffBackend); "" for a backend that runs no CLI.
	FirstEvent string
	// Summarize gives the live view's lines of one event of the CLI's
	// stream; message gathers a message the CLI streams in pieces. nil
	// where there is no view: command prints as it goes, and a replay
	// shows its recorded output.
	Summarize func(ev map[string]any, message *strings.Builder) []string
	// IterFiles are the files of the iteration directory the CLI writes
	// besides the output (bound writable under the sandbox).
	IterFiles []string
	// Home is where the CLI keeps its login, settings and sessions under
	// the home directory ("~/" paths), bound writable under bwrap.
	Home []string
	// Helpers recognise, by command line, the processes the CLI starts
	// for itself outside its process group on every session (SplitEscaped).
	Helpers []func(cmd string) bool
	// SettingsProbes are the CLI's dry runs of a session's settings (argvs
	// after the executable), SettingsFiles the files it reads them from
	// under home and the repository root (settings.go); nil for a backend
	// that runs no CLI.
	SettingsProbes func(a config.Agent) [][]string
	SettingsFiles  func(home, root string) []string
	// Endpoint is where the CLI's sessions send their requests and
	// whether it has a key (endpoint.go); nil for a backend that runs
	// no provider's CLI.
	Endpoint func(a config.Agent, root string, env EndpointEnv) (Endpoint, bool)
	// AllowedTools are the CLI's arguments that let it run tools without
	// asking (a node's allowed_tools, lib/nodetools); nil for a CLI that
	// takes none.
	AllowedTools func(tools []string) []string
}

// CLI reports whether the backend runs an agent CLI of its own (one that
// [agent] fallback may hand a session to).
func (s Spec) CLI() bool { return s.FirstEvent != "" }

// Specs are the backends, in config.Backends' order.
var Specs = []Spec{
	{Name: "command", New: func() Backend { return Command{} }},
	{Name: "codex", New: func() Backend { return Codex{} }, Bin: "codex", Tokens: true, Streams: true,
		FirstEvent: "thread.started", Summarize: summarizeCodex, Home: []string{"~/.codex"}, IterFiles: []string{CodexMessageFile},
		SettingsProbes: codexProbes, SettingsFiles: codexSettingsFiles, Endpoint: codexEndpoint,
		Helpers: []func(string) bool{func(cmd string) bool {
			// Codex snapshots the user's shell at start (a login shell
			// running a script that prints "# Snapshot file"), and a short
			// session ends before the snapshot does.
			return strings.Contains(cmd, "-lc ") && strings.Contains(cmd, "# Snapshot file")
		}}},
	{Name: "claude", New: func() Backend { return Claude{} }, Bin: "claude", Tokens: true, Cost: true, Streams: true,
		FirstEvent: "system", Summarize: summarizeClaude, Home: []string{"~/.claude", "~/.claude.json"},
		SettingsProbes: claudeProbes, SettingsFiles: claudeSettingsFiles, Endpoint: claudeEndpoint,
		AllowedTools: func(tools []string) []string { return []string{"--allowedTools", strings.Join(tools, ",")} }},
	{Name: "opencode", New: func() Backend { return OpenCode{} }, Bin: "opencode", Tokens: true, Streams: true,
		FirstEvent: "step_start", Summarize: summarizeOpenCode, SettingsProbes: opencodeProbes, SettingsFiles: opencodeSettingsFiles, Endpoint: opencodeEndpoint,
		Home: []string{"~/.local/share/opencode", "~/.config/opencode", "~/.cache/opencode", "~/.local/state/opencode"}},
	{Name: "gemini", New: func() Backend { return Gemini{} }, Bin: "gemini", Tokens: true, Streams: true,
		FirstEvent: "init", Summarize: summarizeGemini, Home: []string{"~/.gemini"},
		SettingsProbes: geminiProbes, SettingsFiles: geminiSettingsFiles, Endpoint: geminiEndpoint,
		AllowedTools: func(tools []string) []string {
			var args []string
			for _, tool := range tools {
				args = append(args, "--allowed-tools", tool)
			}
			return args
		}},
	{Name: "replay", New: func() Backend { return Replay{} }, RunsNothing: true, Tokens: true, Cost: true, Streams: true},
}

// Lookup is the spec of the backend named name.
func Lookup(name string) (Spec, bool) {
	for _, s := range Specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Names are the backends' names, in Specs' order; with cli, only those
// that run an agent CLI.
func Names(cli bool) []string {
	var out []string
	for _, s := range Specs {
		if !cli || s.CLI() {
			out = append(out, s.Name)
		}
	}
	return out
}

// Streams reports whether the sessions of the backend named name keep an
// event stream (Spec.Streams).
func Streams(name string) bool {
	s, _ := Lookup(name)
	return s.Streams
}

// HasLiveView reports whether the backend named name has a live view of
// its events (Spec.Summarize).
func HasLiveView(name string) bool {
	s, _ := Lookup(name)
	return s.Summarize != nil
}
