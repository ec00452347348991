package nodetools

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
)

// TestParse: tools.json as its schema has it, and what it refuses, each
// error naming the file: JSON that is not strict, a key it does not know,
// a value of the wrong type, an empty model, an environment variable of
// the runner's own (RUNNER_, TREELOOP_, GIT_) or not a name.
func TestParse(t *testing.T) {
	got, err := Parse("tools.json", []byte(`{"model":"m","extra_args":["--x"],"env":{"B":"2","A":"1"},"allowed_tools":["Bash(go test:*)"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "m" || !slices.Equal(got.ExtraArgs, []string{"--x"}) || got.Env["A"] != "1" || got.Env["B"] != "2" || !slices.Equal(got.AllowedTools, []string{"Bash(go test:*)"}) {
		t.Errorf("Parse = %+v", got)
	}
	if got, err := Parse("tools.json", []byte(`{}`)); err != nil || got.Model != "" || got.Env != nil || got.ExtraArgs != nil {
		t.Errorf("an empty object: %+v, %v", got, err)
	}
	for _, bad := range []string{
		`{"model":"m",}`,
		`{"model":"m","model":"n"}`,
		`{"modle":"m"}`,
		`{"extra_args":"--x"}`,
		`{"model":""}`,
		`{"env":{"GIT_DIR":"/elsewhere"}}`,
		`{"env":{"RUNNER_GUARD":"true"}}`,
		`{"env":{"TREELOOP_LOCKED":"1"}}`,
		`{"env":{"1X":"y"}}`,
		`{"env":{"A":1}}`,
		`{"allowed_tools":[""]}`,
	} {
		if _, err := Parse("nodes/a/tools.json", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "nodes/a/tools.json: ") {
			t.Errorf("Parse(%s) = %v, want an error naming the file", bad, err)
		}
	}
}

// TestRead: a node's tools.json as the base commit has it, not as the
// work tree does; none is no error; a git failure is one.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	p := filepath.Join(dir, filepath.FromSlash(layout.NodeTools("a")))
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte(`{"model":"committed"}`), 0o644)
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "tools")
	os.WriteFile(p, []byte(`{"model":"forged"}`), 0o644)
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, err := Read(repo, "HEAD", "a"); err != nil || !ok || got.Model != "committed" {
		t.Errorf("Read(a) = %+v, %v, %v", got, ok, err)
	}
	if got, ok, err := Read(repo, "HEAD", "b"); err != nil || ok || got.Model != "" {
		t.Errorf("Read(b) = %+v, %v, %v; want none", got, ok, err)
	}
	if _, ok, err := FromFile(git.File{Path: "x", Err: errors.New("git failed")}); ok || err == nil {
		t.Errorf("a read that failed: %v, %v", ok, err)
	}
	if _, ok, err := FromFile(git.File{Path: "x", Data: []byte(`{"modle":1}`), OK: true}); ok || err == nil {
		t.Errorf("a file that is not tools.json: %v, %v", ok, err)
	}
}

// TestApply: the model replaced, the arguments appended (the agent's own
// left as they were), the allowed tools as the CLI's flag where it takes
// them and an error where it does not, the environment sorted; Summary
// names the environment by its keys alone.
func TestApply(t *testing.T) {
	agent := config.Agent{Backend: "claude", Model: "base", ExtraArgs: []string{"--a"}}
	tools := Tools{Model: "m", ExtraArgs: []string{"--b"}, Env: map[string]string{"Z": "secret", "A": "1"}, AllowedTools: []string{"Read", "Bash(ls)"}}
	got, env, err := tools.Apply(agent)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != "m" || !slices.Equal(got.ExtraArgs, []string{"--a", "--b", "--allowedTools", "Read,Bash(ls)"}) || !slices.Equal(env, []string{"A=1", "Z=secret"}) {
		t.Errorf("Apply = %+v, %q", got, env)
	}
	if !slices.Equal(agent.ExtraArgs, []string{"--a"}) {
		t.Errorf("the agent's own arguments changed: %q", agent.ExtraArgs)
	}
	if got, _, err := (Tools{}).Apply(agent); err != nil || got.Model != "base" || !slices.Equal(got.ExtraArgs, []string{"--a"}) {
		t.Errorf("nothing applied: %+v, %v", got, err)
	}
	agent.Backend = "codex"
	if _, _, err := tools.Apply(agent); err == nil || !strings.Contains(err.Error(), "the codex backend takes none") {
		t.Errorf("allowed tools for codex: %v", err)
	}
	if s := tools.Summary(); s != "model=m extra_args=--b env=A,Z allowed_tools=Read,Bash(ls)" || strings.Contains(s, "secret") {
		t.Errorf("Summary = %q", s)
	}
	if s := (Tools{}).Summary(); s != "nothing" {
		t.Errorf("Summary of nothing = %q", s)
	}
}
