package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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

// TestParseCaseProblems: each problem a case file can have, at its line
// and column, every one of a file reported at once.
func TestParseCaseProblems(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.toml")
	for _, c := range caseProblems {
		got, ps := ParseCase(file, []byte(c.doc))
		if got != nil {
			t.Errorf("%s\nparsed into %+v", c.doc, got)
		}
		if msgs := strings.Split(strings.ReplaceAll(ps.Error(), file, "c.toml"), "\n"); !slices.Equal(msgs, c.want) {
			t.Errorf("%s\nproblems:\n%s\nwant:\n%s", c.doc, strings.Join(msgs, "\n"), strings.Join(c.want, "\n"))
		}
	}
}

// TestParseCaseValues: every key's value as the case holds it, defaults
// included.
func TestParseCaseValues(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "goal.md"), []byte("\n# From a file\n\nbody"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "v.toml")
	c, ps := ParseCase(file, []byte(`
[case]
id = "v"
description = "d"
goal_file = "goal.md"
root_next = "execute"
timeout_secs = 1
expect = "stuck"
[backends.rel]
backend = "command"
bin = "agents/s"
[backends.path]
backend = "codex"
bin = "codex-cli"
model = "m1"
[backends.abs]
backend = "claude"
bin = "/usr/bin/claude"
env = ["K=v=w", "E="]
[[checks]]
type = "command_succeeds"
cmd = ["make", "test"]
[[checks]]
type = "command_succeeds"
cmd = ["true"]
timeout_secs = 1
name = "quick"
[[checks]]
type = "json_path"
path = "./a.json"
query = "x"
exists = false
[[checks]]
type = "tree_passed_count"
min = 0
[[checks]]
type = "tree_max_depth"
min = 2
max = 2
[[checks]]
type = "runner_completed"
`))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if c.ID != "v" || c.Description != "d" || c.Goal != "\n# From a file\n\nbody" || c.RootNext != "execute" || c.TimeoutSecs != 1 ||
		c.Expect != Stuck || c.Fixture != "" || len(c.Config) != 0 || c.File != file {
		t.Errorf("case: %+v", c)
	}
	if string(c.GoalBytes()) != c.Goal+"\n" {
		t.Errorf("GoalBytes: %q", c.GoalBytes())
	}
	wantBackends := map[string]Backend{
		"rel":  {Name: "rel", Backend: "command", Bin: filepath.Join(dir, "agents/s"), ExtraArgs: []string{}},
		"path": {Name: "path", Backend: "codex", Bin: "codex-cli", Model: "m1", ExtraArgs: []string{}},
		"abs":  {Name: "abs", Backend: "claude", Bin: "/usr/bin/claude", ExtraArgs: []string{}, Env: []string{"K=v=w", "E="}},
	}
	if !reflect.DeepEqual(c.Backends, wantBackends) {
		t.Errorf("backends:\n got %+v\nwant %+v", c.Backends, wantBackends)
	}
	wantValueChecks(t, c.Checks)
	c.Goal = "# ends\n"
	if string(c.GoalBytes()) != "# ends\n" {
		t.Errorf("GoalBytes of a goal that ends in a newline: %q", c.GoalBytes())
	}
}

// wantValueChecks are TestParseCaseValues' checks as parsed.
func wantValueChecks(t *testing.T, ch []Check) {
	t.Helper()
	if len(ch) != 6 {
		t.Fatalf("%d checks", len(ch))
	}
	if ch[0].Name != "command_succeeds make test" || ch[0].TimeoutSecs != DefaultCheckTimeoutSecs || !slices.Equal(ch[0].Cmd, []string{"make", "test"}) {
		t.Errorf("check 0: %+v", ch[0])
	}
	if ch[1].Name != "quick" || ch[1].TimeoutSecs != 1 {
		t.Errorf("check 1: %+v", ch[1])
	}
	if ch[2].Name != "json_path ./a.json x" || ch[2].HasEquals || ch[2].Exists == nil || *ch[2].Exists {
		t.Errorf("check 2: %+v", ch[2])
	}
	if ch[3].Name != "tree_passed_count" || ch[3].Min == nil || *ch[3].Min != 0 || ch[3].Max != nil {
		t.Errorf("check 3: %+v", ch[3])
	}
	if ch[4].Min == nil || ch[4].Max == nil || *ch[4].Min != 2 || *ch[4].Max != 2 {
		t.Errorf("check 4: %+v", ch[4])
	}
	if ch[5].Name != "runner_completed" || ch[5].Type != RunnerCompleted {
		t.Errorf("check 5: %+v", ch[5])
	}
}

const minimalCase = "[case]\nid = %q\ngoal = \"# G\"\n[[checks]]\ntype = \"runner_completed\"\n"

// TestLoadDir: every case of a directory sorted by id; duplicate ids and
// the problems of each file are reported; an empty directory is an error.
func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "no cases (*.toml) in") {
		t.Fatalf("empty directory: %v", err)
	}
	for _, id := range []string{"b", "a", "c"} {
		if err := os.WriteFile(filepath.Join(dir, id+".toml"), []byte(fmt.Sprintf(minimalCase, id)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases, ps, err := LoadDir(dir)
	if err != nil || len(ps) > 0 || len(cases) != 3 || cases[0].ID != "a" || cases[1].ID != "b" || cases[2].ID != "c" {
		t.Fatalf("LoadDir: %v %v %v", cases, ps, err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	dup := filepath.Join(sub, "a.toml")
	if err := os.WriteFile(dup, []byte(fmt.Sprintf(minimalCase, "a")), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(sub, "bad.toml")
	if err := os.WriteFile(bad, []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases, ps, err = LoadFiles([]string{filepath.Join(dir, "a.toml"), dup, bad})
	if err != nil || len(cases) != 1 || len(ps) != 4 {
		t.Fatalf("LoadFiles: %v %v %v", cases, ps, err)
	}
	if want := fmt.Sprintf("%s: case id \"a\" is also used by %s", dup, filepath.Join(dir, "a.toml")); ps[0].Error() != want {
		t.Errorf("duplicate: %q, want %q", ps[0].Error(), want)
	}
	if _, _, err := LoadFiles([]string{filepath.Join(dir, "missing.toml")}); err == nil {
		t.Error("a missing case file loaded")
	}
}

func TestBackendsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "backends.toml")
	if got, ps, err := BackendsFile(file); err != nil || len(ps) > 0 || got == nil || len(got) != 0 {
		t.Fatalf("missing file: %v %v %v", got, ps, err)
	}
	if err := os.WriteFile(file, []byte("[fast]\nbackend = \"claude\"\nmodel = \"m\"\nbin = \"bin/claude\"\n[slow]\nbackend = \"codex\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, ps, err := BackendsFile(file)
	want := map[string]Backend{
		"fast": {Name: "fast", Backend: "claude", Model: "m", Bin: filepath.Join(dir, "bin/claude"), ExtraArgs: []string{}},
		"slow": {Name: "slow", Backend: "codex", ExtraArgs: []string{}},
	}
	if err != nil || len(ps) > 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("BackendsFile: %+v %v %v", got, ps, err)
	}
	if err := os.WriteFile(file, []byte("[fast]\nbackend = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ps, err := BackendsFile(file); err != nil || len(ps) != 1 || !strings.HasSuffix(ps[0].Error(), ":2:1: backend must be a string, got an integer") {
		t.Fatalf("bad backend: %v %v", ps, err)
	}
	if err := os.WriteFile(file, []byte("[fast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ps, err := BackendsFile(file); err != nil || len(ps) != 1 || got != nil {
		t.Fatalf("not TOML: %v %v %v", got, ps, err)
	}
	if _, _, err := BackendsFile(dir); err == nil {
		t.Fatal("a directory read as backends.toml")
	}
}

func TestResolveBackendMissing(t *testing.T) {
	c := &Case{ID: "c1", File: "/x/c1.toml", Backends: map[string]Backend{}}
	_, err := ResolveBackend(c, "mine", nil)
	want := `case c1 has no backend "mine": define [backends.mine] in c1.toml or [mine] in eval/backends.toml, or use a built-in backend (command, codex, claude, opencode, gemini)`
	if err == nil || err.Error() != want {
		t.Fatalf("ResolveBackend: %v\nwant %s", err, want)
	}
	got, err := ResolveBackend(c, "gemini", nil)
	if err != nil || !reflect.DeepEqual(got, Backend{Name: "gemini", Backend: "gemini", ExtraArgs: []string{}}) {
		t.Fatalf("built-in: %+v %v", got, err)
	}
}

func TestProblemText(t *testing.T) {
	if got := (Problem{File: "f.toml", Msg: "m"}).Error(); got != "f.toml: m" {
		t.Errorf("without a position: %q", got)
	}
	if got := (Problem{File: "f.toml", Line: 1, Col: 1, Msg: "m"}).Error(); got != "f.toml:1:1: m" {
		t.Errorf("first line: %q", got)
	}
}

// caseProblems are case files and the problems ParseCase finds in each.
var caseProblems = []struct {
	doc  string
	want []string
}{
	{`[case]
id = "-x"
goal = "# G"
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:2:1: id \"-x\" must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$ (it becomes a directory name)",
	}},
	{`[case]
id = "other"
goal = "# G"
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:2:1: id \"other\" differs from the file name: name the file other.toml or the case \"c\"",
	}},
	{`[case]
id = "c"
goal = "# G"
goal_file = "g.md"
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:4:1: give goal or goal_file, not both",
	}},
	{`[case]
id = "c"
goal_file = "missing.md"
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:3:1: goal_file: no such file or directory",
	}},
	{`[case]
id = "c"
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:1:2: [case]: missing goal: needs goal (text) or goal_file (a GOAL.md)",
	}},
	{`[case]
goal = "# G"
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:1:2: [case]: missing id: add id = \"…\"",
	}},
	{`[case]
id = "c"
goal = "G"
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:3:1: the goal must start with a \"# \" heading (the root node's title)",
	}},
	{`[case]
id = ""
goal = "\n\n# G"
fixture = "nope"
root_next = "sideways"
timeout_secs = 0
expect = "win"
extra = 1
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:2:1: id must not be empty",
		"c.toml:4:1: fixture \"nope\" is not a directory next to the case file",
		"c.toml:5:1: root_next must be \"decompose\" or \"execute\", got \"sideways\"",
		"c.toml:6:1: timeout_secs must be at least 1, got 0",
		"c.toml:7:1: expect must be one of success, fail, stuck, limit, timeout, error, got \"win\"",
		"c.toml:8:1: unknown key \"case.extra\"",
	}},
	// A value of a wrong type stops the decoding: one problem, at its key.
	{`[case]
id = "c"
goal = "# G"
timeout_secs = "1"
description = 5
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:4:1: timeout_secs must be an integer, got a string",
	}},
	{`[case]
id = "c"
goal = "# G"
description = 5
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:4:1: description must be a string, got an integer",
	}},
	{`[case]
id = "c"
goal = "# G"
[config]
max_iterations = "x"
nope = 1
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:5:1: [config] max_iterations: cannot decode string into int",
	}},
	{`case = 1
checks = 1`, []string{
		"c.toml:1:1: case must be a table, got an integer",
	}},
	{`[case]
id = "c"
goal = "# G"
checks = 1`, []string{
		"c.toml: a case needs at least one [[checks]] entry",
		"c.toml:4:1: unknown key \"case.checks\"",
	}},
	{`checks = 1`, []string{
		"c.toml:1:1: checks must be an array of tables ([[checks]]), got an integer",
	}},
	{`checks = [1, 2]`, []string{
		"c.toml:1:1: checks must be an array of tables ([[checks]]), got an array holding an integer",
	}},
	{`[case]
id = "c"
goal = "# G"
[[checks]]
type = "command_succeeds"
cmd = "ls"`, []string{
		"c.toml:6:1: cmd must be an array of strings, got a string",
	}},
	{`[case]
id = "c"
goal = "# G"
[[checks]]
type = "command_succeeds"
cmd = [
  "ls",
  1,
]`, []string{
		"c.toml:6:1: cmd must be an array of strings, got an array holding an integer",
	}},
	{`[case]
id = "c"
goal = "# G"
[[checks]]
name = 5`, []string{
		"c.toml:5:1: name must be a string, got an integer",
	}},
	{`[case
id = 1`, []string{
		"c.toml:1:6: expected ']' to close table name",
	}},
	{`[case]
id = "c"
goal = "# G"
[backends]
"bad name" = {backend = "command"}
b1 = {bin = "x"}
b2 = {backend = "nope", env = ["=x", "NOEQ", "K=v"], other = 1}
[[checks]]
type = "runner_completed"`, []string{
		"c.toml:5:1: backend name \"bad name\" must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$",
		"c.toml:6:1: [backends.b1]: missing backend: add backend = \"…\"",
		"c.toml:7:7: backend must be one of command, codex, claude, opencode, gemini, replay, got \"nope\"",
		"c.toml:7:25: env entries are KEY=VALUE, got \"=x\"",
		"c.toml:7:25: env entries are KEY=VALUE, got \"NOEQ\"",
		"c.toml:7:54: unknown key \"backends.b2.other\"",
	}},
	{`[backends]
b2 = {backend = "command", extra_args = "x"}`, []string{
		"c.toml:2:28: extra_args must be an array of strings, got a string",
	}},
	{`[backends]
b3 = {backend = "command", extra_args = [1, "a"]}`, []string{
		"c.toml:2:28: extra_args must be an array of strings, got an array holding an integer",
	}},
	{`[backends]
b4 = 5`, []string{
		"c.toml:2:1: backends.b4 must be a table, got an integer",
	}},
	{`[case]
id = "c"
goal = "# G"
[[checks]]
type = "nope"
what = 1
[[checks]]
type = "runner_completed"
path = "x"
[[checks]]
type = "file_exists"
pattern = "x"
[[checks]]
type = "file_contains"
path = "/abs"
pattern = "("
[[checks]]
type = "command_succeeds"
[[checks]]
type = "command_succeeds"
cmd = []
timeout_secs = 0
[[checks]]
type = "command_succeeds"
cmd = ["ls"]
[[checks]]
type = "command_succeeds"
cmd = ["", "x"]
[[checks]]
type = "json_path"
path = "../x.json"
query = "a"
[[checks]]
type = "json_path"
path = "x.json"
query = "a"
equals = 1
exists = true
[[checks]]
type = "tree_max_depth"
[[checks]]
type = "tree_passed_count"
min = 3
max = 2
[[checks]]
type = "tree_passed_count"
min = -1
[[checks]]
name = "no type"`, []string{
		"c.toml:5:1: unknown check type \"nope\" (want one of file_exists, file_contains, command_succeeds, runner_completed, json_path, tree_passed_count, tree_max_depth)",
		"c.toml:6:1: unknown key \"checks[0].what\"",
		"c.toml:9:1: a runner_completed check takes no \"path\"",
		"c.toml:10:3: checks[2]: missing path: add path = \"…\"",
		"c.toml:12:1: a file_exists check takes no \"pattern\" (it takes path)",
		"c.toml:15:1: path \"/abs\" must be relative to the workspace and stay inside it",
		"c.toml:16:1: pattern: error parsing regexp: missing closing ): `(`",
		"c.toml:17:3: checks[4]: missing cmd: add cmd = [\"program\", \"arg\", …]",
		"c.toml:21:1: cmd must be a non-empty argv",
		"c.toml:22:1: timeout_secs must be at least 1, got 0",
		"c.toml:28:1: cmd must be a non-empty argv",
		"c.toml:29:3: checks[8]: a json_path check takes either equals or exists",
		"c.toml:31:1: path \"../x.json\" must be relative to the workspace and stay inside it",
		"c.toml:33:3: checks[9]: a json_path check takes either equals or exists",
		"c.toml:39:3: checks[10]: a tree_max_depth check needs min, max or both",
		"c.toml:43:1: min 3 is more than max 2",
		"c.toml:47:1: min must be 0 or more, got -1",
		"c.toml:48:3: checks[13]: missing type: add type = \"…\"",
	}},
}

// TestParseCaseUnknownKeys: go-toml's strict decoding refuses every key a
// case file does not have, each named with its table (an array table's
// element numbered; in a check of a known type, with the keys it takes)
// at its line and column, together with the problems found in the values
// it did decode.
func TestParseCaseUnknownKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "c.toml")
	doc := `title = "x"
[case]
id = "c"
goal = "# G"
colour = "blue"
timeout_secs = 0
[case.extra]
a = 1
[[checks]]
type = "runner_completed"
[[checks]]
type = "file_exists"
path = "a"
"odd key" = 1
[[checks]]
colour = 1
`
	c, ps := ParseCase(file, []byte(doc))
	if c != nil {
		t.Fatalf("parsed into %+v", c)
	}
	got := strings.Split(strings.ReplaceAll(ps.Error(), file, "c.toml"), "\n")
	want := []string{
		`c.toml:1:1: unknown key "title"`,
		`c.toml:5:1: unknown key "case.colour"`,
		"c.toml:6:1: timeout_secs must be at least 1, got 0",
		`c.toml:7:2: unknown table "case.extra"`,
		`c.toml:14:1: a file_exists check takes no "odd key" (it takes path)`,
		`c.toml:15:3: checks[2]: missing type: add type = "…"`,
		`c.toml:16:1: unknown key "checks[2].colour"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestParseCaseWording: a value of the wrong type is worded with its
// article ("an array", "a float"), an unknown key of the first check as
// any check's (what its type takes), a syntax error as go-toml words it.
func TestParseCaseWording(t *testing.T) {
	for doc, want := range map[string]string{
		"[case]\nid = [1]\n": "/x/c.toml:2:1: id must be a string, got an array",
		"[case]\nid = 1.5\n": "/x/c.toml:2:1: id must be a string, got a float",
		"[case]\nid = \"c\"\ngoal = \"# G\"\n[[checks]]\ntype = \"file_exists\"\npath = \"a\"\ncolour = 1\n": `/x/c.toml:7:1: a file_exists check takes no "colour" (it takes path)`,
		"[case\n": "/x/c.toml:1:6: expected ']' to close table name",
	} {
		c, ps := ParseCase("/x/c.toml", []byte(doc))
		if c != nil || ps.Error() != want {
			t.Errorf("ParseCase(%q) = %v, %q; want %q", doc, c, ps.Error(), want)
		}
	}
	for typ, want := range map[string]string{"array": "an array", "integer": "an integer", "string": "a string", "table": "a table"} {
		if got := article(typ); got != want {
			t.Errorf("article(%q) = %q, want %q", typ, got, want)
		}
	}
}
