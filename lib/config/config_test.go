package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestEmptyFileIsDefault(t *testing.T) {
	for _, in := range []string{"", "\n", "# only a comment\n", "[agent]\n[guard]\n"} {
		c, err := Parse("config.toml", []byte(in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if !reflect.DeepEqual(c, Default()) {
			t.Errorf("Parse(%q) = %+v, want Default()", in, c)
		}
	}
}

func TestDefaultValid(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestDefaultTOMLRoundTrip(t *testing.T) {
	c, err := Parse("config.toml", DefaultTOML())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("Parse(DefaultTOML()) = %+v\nwant %+v", c, Default())
	}
}

// The default file spells out every key, so it documents them all.
func TestDefaultTOMLHasEveryKey(t *testing.T) {
	var doc map[string]any
	if err := toml.Unmarshal(DefaultTOML(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, typ reflect.Type, doc map[string]any)
	walk = func(prefix string, typ reflect.Type, doc map[string]any) {
		for f := range typ.Fields() {
			key := f.Tag.Get("toml")
			v, ok := doc[key]
			if !ok {
				t.Errorf("DefaultTOML lacks %s%s", prefix, key)
				continue
			}
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[Duration]() {
				walk(prefix+key+".", f.Type, v.(map[string]any))
			}
		}
	}
	walk("", reflect.TypeFor[Config](), doc)
}

func TestParseValues(t *testing.T) {
	in := `
max_attempts_default = 5
stuck_policy = "skip"
max_iterations = 7
iteration_timeout_secs = 60
agent_idle_timeout_secs = 0
executor_output_limit_bytes = 10
guard_output_limit_bytes = 20
prompt_budget_bytes = 4096
protected_paths = ["docs/*.md", "append-only:tests"]
guard.command = ["make", "test"]
guard.ratchet = ["sh", "count-tests"]

[agent]
backend = "claude"
bin = "/opt/claude"
model = "opus"
extra_args = ["--verbose"]
on_rate_limit = "wait"
max_tokens = 1000000
max_cost_usd = 12
fallback = ["codex", "gemini"]
decompose_model = "haiku"
last_attempt_model = "opus-max"
max_pause = 3600
max_reported_failures = 0

[hooks]
on_stuck = ["notify-send", "stuck"]
on_question = ["notify-send", "question"]
timeout_secs = 5

[sandbox]
mode = "docker"
engine = "podman"
image = "localhost/agents:1"
guard = false
network = "none"
writable = ["~/.claude", "/var/cache/x"]

[setup]
commands = [["npm", "ci"], ["make", "deps"]]
`
	in = strings.Replace(in, "[agent]\n", "[agent]\npermission_mode = \"edits\"\n", 1)
	got, err := Parse("config.toml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		MaxAttemptsDefault: 5, StuckPolicy: "skip", MaxIterations: 7, IterationTimeoutSecs: 60, AgentIdleTimeoutSecs: 0,
		ExecutorOutputLimitBytes: 10, GuardOutputLimitBytes: 20, PromptBudgetBytes: 4096, ArtifactsLimitBytes: 1 << 20,
		ProtectedPaths: []string{"docs/*.md", "append-only:tests"},
		Guard:          Guard{Command: []string{"make", "test"}, Ratchet: []string{"sh", "count-tests"}, Results: ResultsOff, Witness: []string{}, TestFiles: DefaultTestFiles, Evidence: EvidenceWitness, SuiteNodes: []string{}, Caches: CachesPrivate},
		Agent: Agent{Backend: "claude", Bin: "/opt/claude", Model: "opus", ExtraArgs: []string{"--verbose"},
			OnRateLimit: "wait", MaxTokens: 1000000, MaxCostUSD: 12, Prices: map[string]Price{}, Fallback: []string{"codex", "gemini"},
			PermissionMode: "edits", DecomposeModel: "haiku", LastAttemptModel: "opus-max", MaxPause: Duration{time.Hour}},
		Sandbox: Sandbox{Mode: "docker", Engine: "podman", Image: "localhost/agents:1", Guard: false, Network: "none", Writable: []string{"~/.claude", "/var/cache/x"}, Readable: []string{}},
		Setup:   Setup{Commands: [][]string{{"npm", "ci"}, {"make", "deps"}}},
		Hooks: Hooks{OnIteration: []string{}, OnComplete: []string{}, OnStuck: []string{"notify-send", "stuck"},
			OnLimit: []string{}, OnError: []string{}, OnQuestion: []string{"notify-send", "question"}, OnPause: []string{}, TimeoutSecs: 5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if got.IterationTimeout().Seconds() != 60 || got.AgentIdleTimeout() != 0 {
		t.Errorf("durations: %v %v", got.IterationTimeout(), got.AgentIdleTimeout())
	}
}

// An explicit empty list replaces the default list rather than adding to it.
func TestParseEmptyLists(t *testing.T) {
	c, err := Parse("config.toml", []byte("protected_paths = []\n[agent]\nextra_args = []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.ProtectedPaths == nil || len(c.ProtectedPaths) != 0 || c.Agent.ExtraArgs == nil || len(c.Agent.ExtraArgs) != 0 {
		t.Errorf("got %#v, %#v", c.ProtectedPaths, c.Agent.ExtraArgs)
	}
}

func TestWrongType(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`max_attempts_default = "3"`, `config.toml:1: max_attempts_default: cannot decode string into int`},
		{"\n\nmax_iterations = \"x\"", `config.toml:3: max_iterations: cannot decode string into int`},
		{`max_iterations = 1.5`, `config.toml:1: max_iterations: cannot decode float into int`},
		{`iteration_timeout_secs = true`, `config.toml:1: iteration_timeout_secs: cannot decode boolean into int`},
		{`agent_idle_timeout_secs = [1]`, `config.toml:1: agent_idle_timeout_secs: cannot decode array into int`},
		{`executor_output_limit_bytes = "big"`, `config.toml:1: executor_output_limit_bytes: cannot decode string into int`},
		{`guard_output_limit_bytes = 1e3`, `config.toml:1: guard_output_limit_bytes: cannot decode float into int`},
		{`prompt_budget_bytes = {a = 1}`, `config.toml:1: prompt_budget_bytes: cannot decode inline table into int`},
		{`protected_paths = "justfile"`, `config.toml:1: protected_paths: cannot decode string into array of strings`},
		{`protected_paths = ["a", 1]`, `config.toml:1: protected_paths: cannot decode integer into string`},
		{`guard = "just ci"`, `config.toml:1: guard: cannot decode string into table`},
		{`agent = 1`, `config.toml:1: agent: cannot decode integer into table`},
		{"[guard]\ncommand = \"just ci\"", `config.toml:2: guard.command: cannot decode string into array of strings`},
		{"[guard]\ncommand = [\"just\", 2]", `config.toml:2: guard.command: cannot decode integer into string`},
		{"[agent]\nbackend = 1", `config.toml:2: agent.backend: cannot decode integer into string`},
		{"[agent]\nbin = false", `config.toml:2: agent.bin: cannot decode boolean into string`},
		{"[agent]\nmodel = 1.0", `config.toml:2: agent.model: cannot decode float into string`},
		{"[agent]\nextra_args = \"-v\"", `config.toml:2: agent.extra_args: cannot decode string into array of strings`},
		{"[agent]\nextra_args = [[\"-v\"]]", `config.toml:2: agent.extra_args: cannot decode array into string`},
		{"[agent]\non_rate_limit = 1", `config.toml:2: agent.on_rate_limit: cannot decode integer into string`},
		{"[agent]\nmax_tokens = \"1k\"", `config.toml:2: agent.max_tokens: cannot decode string into int`},
		{"[agent]\nmax_cost_usd = \"$5\"", `config.toml:2: agent.max_cost_usd: cannot decode string into float`},
		{"agent.max_tokens = 1.5", `config.toml:1: agent.max_tokens: cannot decode float into int`},
		// Multi-line values: the line is the key's.
		{"\nprotected_paths = [\n  \"a\",\n  2,\n]", `config.toml:2: protected_paths: cannot decode integer into string`},
		// Syntax and duplicate keys.
		{"max_iterations = ", `config.toml:1: expected value, not end of input`},
		{"max_iterations = 99999999999999999999", `config.toml:1: max_iterations: decimal number is too large to fit in a 64-bit signed integer`},
		{"max_iterations = 3\nmax_iterations = 4", `config.toml:2: max_iterations: key max_iterations is already defined`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse("config.toml", []byte(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse(%q)\n got %v\nwant %s", tc.in, err, tc.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "config.toml" {
				t.Errorf("not an *Error naming the file: %#v", err)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\n\n\n\n\n\nmax_attemps = 3", `config.toml:7: unknown key "max_attemps"`},
		{"[agent]\nmodle = \"x\"", `config.toml:2: unknown key "agent.modle" (did you mean "agent.model"?)`},
		{"agent.modle = \"x\"", `config.toml:1: unknown key "agent.modle" (did you mean "agent.model"?)`},
		{"[guard]\ncmd = [\"x\"]", `config.toml:2: unknown key "guard.cmd"`},
		{"guard = {command = [\"x\"], cwd = \"/\"}", `config.toml:1: unknown key "guard.cwd"`},
		{"[agent.options]\nx = 1", `config.toml:1: unknown table "agent.options"`},
		{"[[runs]]\nx = 1", `config.toml:1: unknown table "runs"`},
		{"\"a b\" = 1", `config.toml:1: unknown key "\"a b\""`},
		{"\"a\\nb\" = 1", `config.toml:1: unknown key "\"a\\nb\""`},
		{"x = 1\n[agent]\ny = 2\n", `config.toml:1: unknown key "x"; config.toml:3: unknown key "agent.y"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse("config.toml", []byte(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Errorf("Parse(%q)\n got %v\nwant %s", tc.in, err, tc.want)
			}
		})
	}
}

func TestOutOfRange(t *testing.T) {
	for _, tc := range []struct{ in, key string }{
		{"max_attempts_default = 0", "max_attempts_default"},
		{"max_attempts_default = 3000000000", "max_attempts_default"},
		{"max_iterations = 0", "max_iterations"},
		{"max_iterations = -1", "max_iterations"},
		{"iteration_timeout_secs = 0", "iteration_timeout_secs"},
		{"iteration_timeout_secs = 9223372036854775807", "iteration_timeout_secs"},
		{"agent_idle_timeout_secs = -1", "agent_idle_timeout_secs"},
		{"executor_output_limit_bytes = 0", "executor_output_limit_bytes"},
		{"guard_output_limit_bytes = 0", "guard_output_limit_bytes"},
		{"prompt_budget_bytes = 4095", "prompt_budget_bytes"},
		{`protected_paths = ["["]`, "protected_paths[0]"},
		{`protected_paths = ["ok", "a\\"]`, "protected_paths[1]"},
		{`protected_paths = [""]`, "protected_paths[0]"},
		{`protected_paths = ["append-only:"]`, "protected_paths[0]"},
		{`protected_paths = ["x", "append-only:["]`, "protected_paths[1]"},
		{`protected_paths = ["**/conftest.py", "a/**/[b"]`, "protected_paths[1]"},
		{`protected_paths = ["pyproject.toml#"]`, "protected_paths[0]"},
		{`protected_paths = ["pyproject.toml#a..b"]`, "protected_paths[0]"},
		{`protected_paths = ["append-only:package.json#jest"]`, "protected_paths[0]"},
		{`protected_paths = ["setup.cfg#a]"]`, "protected_paths[0]"},
		{`guard.ratchet = ["", "x"]`, "guard.ratchet"},
		{"sandbox.mode = \"lxc\"", "sandbox.mode"},
		{"sandbox.engine = \"lxd\"", "sandbox.engine"},
		{"sandbox.image = \"\"", "sandbox.image"},
		{"sandbox.image = \"--privileged\"", "sandbox.image"},
		{"sandbox.image = \"a b\"", "sandbox.image"},
		{`agent.fallback = ["codex", "command"]`, "agent.fallback"},
		{`setup.commands = [["ok"], []]`, "setup.commands[1]"},
		{`setup.commands = [["", "x"]]`, "setup.commands[0]"},
		{"sandbox.network = \"lan\"", "sandbox.network"},
		{`sandbox.writable = ["relative/dir"]`, "sandbox.writable"},
		{`sandbox.readable = ["~/.gitconfig", "x"]`, "sandbox.readable"},
		{"guard.command = []", "guard.command"},
		{`guard.command = ["", "x"]`, "guard.command"},
		{`guard.command = ["a\u0000b"]`, "guard.command"},
		{`agent.backend = "gpt"`, "agent.backend"},
		{`agent.backend = ""`, "agent.backend"},
		{`agent.bin = "a\u0000"`, "agent.bin"},
		{`agent.model = "a\u0000"`, "agent.model"},
		{`agent.extra_args = ["\u0000"]`, "agent.extra_args"},
		{`agent.on_rate_limit = "retry"`, "agent.on_rate_limit"},
		{`stuck_policy = "retry"`, "stuck_policy"},
		{`stuck_policy = ""`, "stuck_policy"},
		{"agent.max_tokens = -1", "agent.max_tokens"},
		{"agent.max_cost_usd = -0.5", "agent.max_cost_usd"},
		{"agent.max_cost_usd = nan", "agent.max_cost_usd"},
		{"agent.max_cost_usd = inf", "agent.max_cost_usd"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse("config.toml", []byte(tc.in))
			if err == nil || !strings.HasPrefix(err.Error(), "config.toml: "+tc.key+": ") {
				t.Errorf("Parse(%q) = %v, want an error naming %s", tc.in, err, tc.key)
			}
			var es Errors
			if !errors.As(err, &es) || len(es) != 1 || es[0].Key != tc.key {
				t.Errorf("want one problem about %s, got %#v", tc.key, err)
			}
		})
	}
}

// TestProtectedKeyEntries: the key entries and "**" globs that validate.
func TestProtectedKeyEntries(t *testing.T) {
	in := `protected_paths = ["**/conftest.py", "pyproject.toml#tool.pytest", "package.json#jest", "setup.cfg#tool:pytest", "notes#1.md", 'x.toml#tool."a.b"']`
	c, err := Parse("config.toml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.ProtectedPaths {
		file, key, ok := ProtectedKey(e)
		if want := e != "**/conftest.py" && e != "notes#1.md"; ok != want {
			t.Errorf("ProtectedKey(%q) = %q, %q, %v; want a key entry: %v", e, file, key, ok, want)
		}
	}
}

func TestValidateCollectsAll(t *testing.T) {
	c := Default()
	c.MaxIterations = 0
	c.Guard.Command = nil
	c.Agent.Backend = "x"
	c.Agent.OnRateLimit = "x"
	err := c.Validate()
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("got %v", err)
	}
	var keys []string
	for _, e := range es {
		keys = append(keys, e.Key)
	}
	want := []string{"max_iterations", "guard.command", "agent.backend", "agent.on_rate_limit"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("message spans lines: %q", err)
	}
	want1 := `max_iterations: must be at least 1, got 0; guard.command: must not be empty; ` +
		`agent.backend: must be one of command, codex, claude, opencode, gemini, replay, got "x"; ` +
		`agent.on_rate_limit: must be "stop" or "wait", got "x"`
	if err.Error() != want1 {
		t.Errorf("got  %s\nwant %s", err, want1)
	}
}

func TestApplyEnv(t *testing.T) {
	base := Default()
	base.Agent.Model = "from-file"
	base.Agent.ExtraArgs = []string{"--file"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want func(*Config)
	}{
		{"none", nil, func(*Config) {}},
		{"backend", map[string]string{"RUNNER_AGENT": "codex"}, func(c *Config) { c.Agent.Backend = "codex" }},
		{"empty backend is unset", map[string]string{"RUNNER_AGENT": ""}, func(*Config) {}},
		{"bin", map[string]string{"RUNNER_AGENT_BIN": "/usr/local/bin/codex"}, func(c *Config) { c.Agent.Bin = "/usr/local/bin/codex" }},
		{"model", map[string]string{"RUNNER_AGENT_MODEL": "o3"}, func(c *Config) { c.Agent.Model = "o3" }},
		{"empty model selects the default", map[string]string{"RUNNER_AGENT_MODEL": ""}, func(c *Config) { c.Agent.Model = "" }},
		{"extra args", map[string]string{"RUNNER_AGENT_EXTRA_ARGS": `--flag 'a b' "c \"d\""`},
			func(c *Config) { c.Agent.ExtraArgs = []string{"--flag", "a b", `c "d"`} }},
		{"empty extra args clears", map[string]string{"RUNNER_AGENT_EXTRA_ARGS": ""}, func(c *Config) { c.Agent.ExtraArgs = []string{} }},
		{"max iterations", map[string]string{"RUNNER_MAX_ITERATIONS": "5"}, func(c *Config) { c.MaxIterations = 5 }},
		{"timeout", map[string]string{"RUNNER_ITERATION_TIMEOUT_SECS": "60"}, func(c *Config) { c.IterationTimeoutSecs = 60 }},
		{"all", map[string]string{"RUNNER_AGENT": "replay", "RUNNER_AGENT_BIN": "b", "RUNNER_AGENT_MODEL": "m",
			"RUNNER_AGENT_EXTRA_ARGS": "x", "RUNNER_MAX_ITERATIONS": "1", "RUNNER_ITERATION_TIMEOUT_SECS": "2",
			"RUNNER_UNRELATED": "z"},
			func(c *Config) {
				c.Agent.Backend, c.Agent.Bin, c.Agent.Model, c.Agent.ExtraArgs = "replay", "b", "m", []string{"x"}
				c.MaxIterations, c.IterationTimeoutSecs = 1, 2
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := base.ApplyEnv(env(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			want := base
			want.ProtectedPaths = slices.Clone(base.ProtectedPaths)
			want.Guard.Command = slices.Clone(base.Guard.Command)
			want.Agent.ExtraArgs = slices.Clone(base.Agent.ExtraArgs)
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
			if base.Agent.Model != "from-file" || !slices.Equal(base.Agent.ExtraArgs, []string{"--file"}) {
				t.Errorf("ApplyEnv modified its receiver: %+v", base)
			}
		})
	}
}

func TestApplyEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"RUNNER_AGENT": "gpt"}, `RUNNER_AGENT: must be one of command, codex, claude, opencode, gemini, replay, got "gpt"`},
		{map[string]string{"RUNNER_AGENT_EXTRA_ARGS": `--x 'open`}, `RUNNER_AGENT_EXTRA_ARGS: unterminated single quote`},
		{map[string]string{"RUNNER_AGENT_EXTRA_ARGS": `"open`}, `RUNNER_AGENT_EXTRA_ARGS: unterminated double quote`},
		{map[string]string{"RUNNER_AGENT_EXTRA_ARGS": `a\`}, `RUNNER_AGENT_EXTRA_ARGS: trailing backslash`},
		{map[string]string{"RUNNER_MAX_ITERATIONS": "ten"}, `RUNNER_MAX_ITERATIONS: not an integer: "ten"`},
		{map[string]string{"RUNNER_MAX_ITERATIONS": "1.5"}, `RUNNER_MAX_ITERATIONS: not an integer: "1.5"`},
		{map[string]string{"RUNNER_MAX_ITERATIONS": "0"}, `RUNNER_MAX_ITERATIONS: must be at least 1, got 0`},
		{map[string]string{"RUNNER_MAX_ITERATIONS": " 5"}, `RUNNER_MAX_ITERATIONS: not an integer: " 5"`},
		{map[string]string{"RUNNER_ITERATION_TIMEOUT_SECS": "99999999999999999999"}, `RUNNER_ITERATION_TIMEOUT_SECS: not an integer: "99999999999999999999"`},
		{map[string]string{"RUNNER_ITERATION_TIMEOUT_SECS": "-5"}, `RUNNER_ITERATION_TIMEOUT_SECS: must be at least 1, got -5`},
		{map[string]string{"RUNNER_MAX_ITERATIONS": "x", "RUNNER_AGENT": "y"},
			`RUNNER_AGENT: must be one of command, codex, claude, opencode, gemini, replay, got "y"; RUNNER_MAX_ITERATIONS: not an integer: "x"`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := Default().ApplyEnv(env(tc.env))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "config.toml")

	c, err := Load(missing, env(nil))
	if err != nil || !reflect.DeepEqual(c, Default()) {
		t.Fatalf("missing file: %+v, %v", c, err)
	}
	c, err = Load(missing, env(map[string]string{"RUNNER_AGENT": "gemini"}))
	if err != nil || c.Agent.Backend != "gemini" {
		t.Fatalf("missing file + env: %+v, %v", c, err)
	}

	if err := os.WriteFile(missing, []byte("max_iterations = 9\n[agent]\nbackend = \"claude\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = Load(missing, env(map[string]string{"RUNNER_AGENT": "codex"}))
	if err != nil || c.MaxIterations != 9 || c.Agent.Backend != "codex" {
		t.Fatalf("file + env: %+v, %v", c, err)
	}

	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("max_attemps = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad, env(nil)); err == nil || err.Error() != bad+`:1: unknown key "max_attemps"` {
		t.Errorf("bad file: %v", err)
	}
	if _, err := Load(missing, env(map[string]string{"RUNNER_MAX_ITERATIONS": "x"})); err == nil ||
		!strings.Contains(err.Error(), "RUNNER_MAX_ITERATIONS") {
		t.Errorf("bad env: %v", err)
	}
	// A directory is not a missing file.
	if _, err := Load(dir, env(nil)); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory: %v", err)
	}
}

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "", want: []string{}},
		{in: " \t\n ", want: []string{}},
		{in: "a", want: []string{"a"}},
		{in: "  a   b\tc\nd  ", want: []string{"a", "b", "c", "d"}},
		{in: `--model=o3 --flag`, want: []string{"--model=o3", "--flag"}},
		{in: `'a b' "c d"`, want: []string{"a b", "c d"}},
		{in: `a'b c'd`, want: []string{"ab cd"}},
		{in: `'' ""`, want: []string{"", ""}},
		{in: `a '' b`, want: []string{"a", "", "b"}},
		{in: `'a\b'`, want: []string{`a\b`}},
		{in: `'a"b'`, want: []string{`a"b`}},
		{in: `"a'b"`, want: []string{`a'b`}},
		{in: `"a\"b"`, want: []string{`a"b`}},
		{in: `"a\\b"`, want: []string{`a\b`}},
		{in: `"a\$b\` + "`" + `"`, want: []string{"a$b`"}},
		{in: `"a\nb"`, want: []string{`a\nb`}},
		{in: "\"a\\\nb\"", want: []string{"ab"}},
		{in: `a\ b`, want: []string{"a b"}},
		{in: `a\'b`, want: []string{"a'b"}},
		{in: `\"`, want: []string{`"`}},
		{in: `\\`, want: []string{`\`}},
		{in: "a\\\nb", want: []string{"ab"}},
		{in: `$HOME ~ *`, want: []string{"$HOME", "~", "*"}},
		{in: `--json '{"a": 1}'`, want: []string{"--json", `{"a": 1}`}},
		{in: "héllo 'wörld'", want: []string{"héllo", "wörld"}},
		{in: `'a`, err: "unterminated single quote"},
		{in: `a 'b"`, err: "unterminated single quote"},
		{in: `"a`, err: "unterminated double quote"},
		{in: `"a\"`, err: "unterminated double quote"},
		{in: `a\`, err: "trailing backslash"},
	} {
		got, err := SplitArgs(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("SplitArgs(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(DefaultTOML())
	f.Add([]byte(""))
	f.Add([]byte("max_iterations = \"x\"\n[agent]\nmodle = 1\n"))
	f.Add([]byte("guard = {command = [\"x\"], cwd = 1}\nprotected_paths = [\"[\"]\n"))
	f.Add([]byte("[agent]\nmax_cost_usd = nan\nextra_args = [[\"a\"]]\n"))
	f.Add([]byte("[[agent]]\n[agent.x]\n\"a\\nb\" = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.toml", data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Errorf("error spans lines: %q", err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Errorf("error does not name the file: %q", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Errorf("Parse accepted %q but Validate says %v", data, err)
		}
	})
}

func TestErrorsAs(t *testing.T) {
	_, err := Parse("config.toml", []byte("max_iterations = 0\nagent.backend = \"x\"\n"))
	var e *Error
	if !errors.As(err, &e) || e.Key != "max_iterations" || e.File != "config.toml" {
		t.Fatalf("errors.As(*Error) on %v: %+v", err, e)
	}
}

// The [hooks] example in docs/operations.md is a valid configuration.
func TestReadmeHooksExample(t *testing.T) {
	data, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "```toml\n[hooks]\n")
	if !ok {
		t.Fatal("docs/operations.md has no ```toml [hooks] example")
	}
	block, _, _ := strings.Cut(rest, "```")
	c, err := Parse("docs/operations.md", []byte("[hooks]\n"+block))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hooks.OnStuck) == 0 || len(c.Hooks.OnError) == 0 || c.Hooks.OnError[0] != "curl" || c.Hooks.TimeoutSecs != 15 {
		t.Fatalf("hooks: %+v", c.Hooks)
	}
}

// The model of a session: the last attempt's model wins, then the mode's,
// then model; empty keys fall through.
func TestModelFor(t *testing.T) {
	all := Agent{Model: "m", DecomposeModel: "d", ExecuteModel: "e", LastAttemptModel: "l"}
	tests := []struct {
		a                  Agent
		mode               string
		attempts, max      int
		wantModel, wantKey string
	}{
		{all, "execute", 0, 3, "e", ModelRuleExecute},
		{all, "decompose", 1, 3, "d", ModelRuleDecompose},
		{all, "execute", 2, 3, "l", ModelRuleLastAttempt},
		{all, "decompose", 2, 3, "l", ModelRuleLastAttempt},
		{all, "execute", 0, 1, "l", ModelRuleLastAttempt}, // one attempt: the first is the last
		{Agent{Model: "m", LastAttemptModel: "l"}, "execute", 1, 3, "m", ModelRuleModel},
		{Agent{Model: "m", DecomposeModel: "d"}, "execute", 2, 3, "m", ModelRuleModel},
		{Agent{Model: "m", DecomposeModel: "d"}, "decompose", 2, 3, "d", ModelRuleDecompose},
		{Agent{}, "execute", 0, 3, "", ModelRuleModel},
	}
	for _, tt := range tests {
		m, k := tt.a.ModelFor(tt.mode, tt.attempts, tt.max)
		if m != tt.wantModel || k != tt.wantKey {
			t.Errorf("%+v.ModelFor(%s, %d, %d) = %q, %q; want %q, %q", tt.a, tt.mode, tt.attempts, tt.max, m, k, tt.wantModel, tt.wantKey)
		}
	}
}

// max_pause takes seconds or a duration string; anything else is an error
// naming the key.
func TestMaxPause(t *testing.T) {
	for doc, want := range map[string]time.Duration{
		"[agent]\nmax_pause = 90\n":     90 * time.Second,
		"[agent]\nmax_pause = \"5h\"\n": 5 * time.Hour,
		"[agent]\nmax_pause = 0\n":      0,
		"":                              12 * time.Hour,
	} {
		c, err := Parse("config.toml", []byte(doc))
		if err != nil || c.Agent.MaxPause.Duration != want {
			t.Errorf("Parse(%q): max_pause %v, %v; want %v", doc, c.Agent.MaxPause.Duration, err, want)
		}
	}
	for _, doc := range []string{"[agent]\nmax_pause = \"soon\"\n", "[agent]\nmax_pause = -5\n", "[agent]\nmax_pause = 1.5\n"} {
		if _, err := Parse("config.toml", []byte(doc)); err == nil || !strings.Contains(err.Error(), "max_pause") {
			t.Errorf("Parse(%q) = %v, want an error naming max_pause", doc, err)
		}
	}
}

// max_reported_failures is a count from 0 (every reported failure costs an
// attempt); 3 when left out.
func TestMaxReportedFailures(t *testing.T) {
	for doc, want := range map[string]int{"[agent]\nmax_reported_failures = 0\n": 0, "[agent]\nmax_reported_failures = 7\n": 7, "": 3} {
		c, err := Parse("config.toml", []byte(doc))
		if err != nil || c.Agent.MaxReportedFailures != want {
			t.Errorf("Parse(%q): max_reported_failures %d, %v; want %d", doc, c.Agent.MaxReportedFailures, err, want)
		}
	}
	for _, doc := range []string{"[agent]\nmax_reported_failures = -1\n", "[agent]\nmax_reported_failures = \"3\"\n"} {
		if _, err := Parse("config.toml", []byte(doc)); err == nil || !strings.Contains(err.Error(), "max_reported_failures") {
			t.Errorf("Parse(%q) = %v, want an error naming max_reported_failures", doc, err)
		}
	}
}

// TestWithChoices: every choice runner-init makes reads back as written,
// quotes and backslashes included, and the rest stays the default.
func TestWithChoices(t *testing.T) {
	c := Choices{
		Backend: "codex", Mode: SandboxBwrap, Writable: []string{"~/.codex"}, Readable: []string{"~/.pyenv", `~/a "b"\c`},
		Guard: []string{".venv/bin/python", "-m", "pytest", "--junitxml=${RUNNER_TEST_RESULTS}/pytest.xml"}, Results: ResultsAuto,
		Witness:   []string{".venv/bin/python", "-m", "pytest", "${RUNNER_TEST_FILES}"},
		Protected: []string{"**/conftest.py", "**/pyproject.toml#tool.pytest"},
	}
	got, err := Parse("config.toml", WithChoices(DefaultTOML(), c))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Agent.Backend, want.Sandbox.Mode, want.Sandbox.Writable, want.Sandbox.Readable = c.Backend, c.Mode, c.Writable, c.Readable
	want.Guard.Command, want.Guard.Results, want.Guard.Witness = c.Guard, c.Results, c.Witness
	want.ProtectedPaths = append(want.ProtectedPaths, c.Protected...)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("WithChoices read back as\n%+v\nwant\n%+v", got, want)
	}
	if same, err := Parse("config.toml", WithChoices(DefaultTOML(), Choices{})); err != nil || !reflect.DeepEqual(same, Default()) {
		t.Errorf("WithChoices with no choice = %+v, %v; want the default", same, err)
	}
}

// TestAgentUnconfined: the default ("none") runs the agent unconfined,
// bwrap and docker do not, and neither does a config that is not there
// or cannot be read.
func TestAgentUnconfined(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		mode string
		want bool
	}{{"none", true}, {"bwrap", false}, {"docker", false}} {
		p := filepath.Join(dir, c.mode+".toml")
		data := strings.Replace(string(DefaultTOML()), `mode = "none"`, `mode = "`+c.mode+`"`, 1)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := AgentUnconfined(p); got != c.want {
			t.Errorf("mode %s: %v", c.mode, got)
		}
	}
	if AgentUnconfined(filepath.Join(dir, "missing.toml")) {
		t.Error("a config that is not there")
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[sandbox]\nmode = 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if AgentUnconfined(bad) {
		t.Error("a config that cannot be read")
	}
}
