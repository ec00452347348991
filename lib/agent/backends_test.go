package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/schema"
)

// The table is the one list of backends: config accepts exactly its
// names (and as a fallback exactly its CLIs), and the schemas' backend
// enums name the same.
func TestSpecsAreTheBackends(t *testing.T) {
	if got := Names(false); !slices.Equal(got, config.Backends) {
		t.Errorf("Specs %q, config.Backends %q", got, config.Backends)
	}
	if got := Names(true); !slices.Equal(got, config.FallbackBackends) {
		t.Errorf("Specs' CLIs %q, config.FallbackBackends %q", got, config.FallbackBackends)
	}
	var enum []string
	for _, v := range gjson.GetBytes(schema.Source(schema.EvalResult), "properties.agent.properties.backend.enum").Array() {
		enum = append(enum, v.String())
	}
	if !slices.Equal(enum, Names(false)) {
		t.Errorf("eval_result's backend enum %q, Specs %q", enum, Names(false))
	}
	for _, s := range Specs {
		b := s.New()
		if b.Name() != s.Name {
			t.Errorf("%s: New makes the backend %q", s.Name, b.Name())
		}
		if got, err := New(s.Name); err != nil || got.Name() != s.Name {
			t.Errorf("New(%q) = %v, %v", s.Name, got, err)
		}
		if s.CLI() != (s.Bin != "") || s.CLI() != (s.Summarize != nil) || s.CLI() != (len(s.Home) > 0) ||
			s.CLI() != (s.SettingsProbes != nil) || s.CLI() != (s.SettingsFiles != nil) {
			t.Errorf("%s: a CLI has a binary, a live view, a home to bind and settings to probe; the others none", s.Name)
		}
	}
	if _, err := New("nope"); err == nil || !strings.Contains(err.Error(), `unknown agent backend "nope"`) {
		t.Errorf("New(nope) = %v", err)
	}
}

// What the switches over backend names said before, now read from the
// table.
func TestSpecDecisions(t *testing.T) {
	measures := map[string][2]bool{"command": {false, false}, "codex": {true, false}, "claude": {true, true}, "opencode": {true, false}, "gemini": {true, false}, "replay": {true, true}, "nope": {false, false}}
	for name, want := range measures {
		if tokens, cost := Measures(name); [2]bool{tokens, cost} != want {
			t.Errorf("Measures(%s) = %v %v, want %v", name, tokens, cost, want)
		}
	}
	execs := []struct{ backend, bin, want string }{
		{"command", "", ""}, {"command", "./agent.sh", "./agent.sh"}, {"replay", "x", ""},
		{"codex", "", "codex"}, {"gemini", "/opt/gemini", "/opt/gemini"}, {"unknown", "", "unknown"},
	}
	for _, e := range execs {
		if got := Executable(config.Agent{Backend: e.backend, Bin: e.bin}); got != e.want {
			t.Errorf("Executable(%s, bin %q) = %q, want %q", e.backend, e.bin, got, e.want)
		}
	}
	if !Streams("replay") || Streams("command") || HasLiveView("replay") || !HasLiveView("opencode") {
		t.Error("replay keeps its events without a live view; command keeps none")
	}
	if got := SandboxHome("claude"); !slices.Equal(got, []string{"~/.claude", "~/.claude.json"}) || SandboxHome("command") != nil {
		t.Errorf("SandboxHome(claude) = %q", got)
	}
	probes := settingsProbes(config.Agent{Backend: "codex", Model: "m1", ExtraArgs: []string{"-c", "k=v", "--full-auto"}})
	if len(probes) != 2 || strings.Join(probes[0], " ") != "exec -m m1 -c k=v --full-auto --help" || strings.Join(probes[1], " ") != "-c k=v mcp list" {
		t.Errorf("codex's probes %q", probes)
	}
	if settingsProbes(config.Agent{Backend: "command"}) != nil || settingsFiles("replay", "/r") != nil {
		t.Error("a backend without a CLI has settings to probe")
	}
	if files := settingsFiles("gemini", "/r"); !slices.Contains(files, "/r/.gemini/settings.json") {
		t.Errorf("gemini's settings files %q", files)
	}
	files := SandboxFiles(config.Agent{Backend: "codex", Fallback: []string{"claude", "codex"}}, "/it", "/it/output.json")
	if !slices.Equal(files, []string{"/it/output.json", "/it/" + CodexMessageFile}) {
		t.Errorf("SandboxFiles of codex: %q", files)
	}
	if files := SandboxFiles(config.Agent{Backend: "claude", Fallback: []string{"codex"}}, "/it", "/it/o"); !slices.Equal(files, []string{"/it/o", "/it/" + CodexMessageFile}) {
		t.Errorf("SandboxFiles of claude with a codex fallback: %q", files)
	}
	if files := SandboxFiles(config.Agent{Backend: "gemini"}, "/it", "/it/o"); !slices.Equal(files, []string{"/it/o"}) {
		t.Errorf("SandboxFiles of gemini: %q", files)
	}
	claude, _ := Lookup("claude")
	gemini, _ := Lookup("gemini")
	if got := strings.Join(claude.AllowedTools([]string{"Bash(go test:*)", "Edit"}), " "); got != "--allowedTools Bash(go test:*),Edit" {
		t.Errorf("claude's allowed tools: %q", got)
	}
	if got := strings.Join(gemini.AllowedTools([]string{"a", "b"}), " "); got != "--allowed-tools a --allowed-tools b" {
		t.Errorf("gemini's allowed tools: %q", got)
	}
	for _, s := range Specs {
		if s.FirstEvent == "" {
			continue
		}
		if got := SniffBackend([]byte("starting\n{\"type\":\"" + s.FirstEvent + "\"}\n")); got != s.Name {
			t.Errorf("SniffBackend of %s's first event = %q", s.Name, got)
		}
	}
}
