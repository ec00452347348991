package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseCaseGood(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "fx"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "c1.toml")
	c, ps := ParseCase(file, []byte(`
[case]
id = "c1"
goal = "# T\n\nbody"
fixture = "fx"
[config]
max_iterations = 7
[config.agent]
model = "m"
[backends.s]
backend = "command"
bin = "agents/s"
extra_args = ["-v"]
env = ["A=1"]
last_attempt_model = "big"
[[checks]]
type = "json_path"
path = "a.json"
query = "x.y"
equals = {k = [1, "two"]}
[[checks]]
type = "file_contains"
path = "f"
pattern = '^a$'
`))
	if len(ps) > 0 {
		t.Fatalf("problems: %v", ps)
	}
	if c.ID != "c1" || c.Fixture != filepath.Join(dir, "fx") || c.RootNext != "decompose" || c.TimeoutSecs != DefaultTimeoutSecs {
		t.Errorf("case: %+v", c)
	}
	if c.Config["max_iterations"] != int64(7) {
		t.Errorf("config: %v", c.Config)
	}
	b := c.Backends["s"]
	if b.Bin != filepath.Join(dir, "agents/s") || b.ExtraArgs[0] != "-v" || b.Env[0] != "A=1" || b.LastAttemptModel != "big" || b.DecomposeModel != "" {
		t.Errorf("backend: %+v", b)
	}
	if !c.Checks[0].HasEquals || c.Checks[0].Name != "json_path a.json x.y" {
		t.Errorf("check: %+v", c.Checks[0])
	}
	if !c.Checks[1].re.MatchString("b\na\n") {
		t.Errorf("file_contains pattern is not multi-line")
	}
	got, err := ResolveBackend(c, "claude", nil)
	if err != nil || got.Backend != "claude" {
		t.Errorf("built-in: %+v %v", got, err)
	}
	if _, err := ResolveBackend(c, "replay", nil); err == nil {
		t.Errorf("replay resolved as a --backend")
	}
	shared := map[string]Backend{"s": {Name: "s", Backend: "codex"}, "t": {Name: "t", Backend: "codex"}}
	if got, _ := ResolveBackend(c, "s", shared); got.Backend != "command" {
		t.Errorf("the case's own backend must win: %+v", got)
	}
	if got, _ := ResolveBackend(c, "t", shared); got.Backend != "codex" {
		t.Errorf("shared: %+v", got)
	}
}

func TestParseCaseNeedsChecksAndCase(t *testing.T) {
	_, ps := ParseCase("/x/empty.toml", []byte("title = 1\n"))
	msgs := ps.Error()
	for _, want := range []string{"missing [case]", "at least one [[checks]]", `1:1: unknown key "title"`} {
		if !strings.Contains(msgs, want) {
			t.Errorf("problems %q lack %q", msgs, want)
		}
	}
}
