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
	// under home and the repository root (CheckSettings); nil for a backend
	// that runs no CLI.
	SettingsProbes func(a config.Agent) [][]string
	SettingsFiles  func(home, root string) []string
	// Endpoint is where the CLI's sessions send their requests and
	// whether it has a key (EndpointOf); nil for a backend that runs
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

// Specs are the backends, in config.Backends' order. Each backend's row
// is declared in its own file, <name>.go, with all that is the backend's
// own: how it runs a session and reads its end, its live view's summary,
// its settings probes and files, its endpoint, and its permission
// mapping, the permission mode ([agent] permission_mode, seed 004
// permissionMode) as the CLI takes it: full lets the CLI do anything,
// edits lets it edit files but run no shell command, read-only lets it
// write nothing; the runner's checks after the session apply whatever
// the mode. TestOneFilePerBackend holds the layout.
var Specs = []Spec{commandSpec, codexSpec, claudeSpec, opencodeSpec, geminiSpec, replaySpec}

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
