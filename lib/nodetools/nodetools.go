// Package nodetools is a node's agent settings sidecar,
// .runner/nodes/<id>/tools.json (seed 000 §3.4,
// schemas/node_tools.v1.schema.json): a model, extra arguments, an
// environment and tools to allow, applied to that node's sessions only,
// over [agent]. It is the operator's file: the runner reads it from the
// commit the step started from, and a session that changes it is an
// agent error (config.Config.Protected).
package nodetools

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	agentspec "github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/layout"
)

// Tools is tools.json.
type Tools struct {
	Model        string            `json:"model,omitempty"`
	ExtraArgs    []string          `json:"extra_args,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	AllowedTools []string          `json:"allowed_tools,omitempty"`
}

// Parse decodes and validates tools.json's bytes by the schema's plain
// check (check_gen.go); name is the file's name in errors, which give the
// schema's first problem as the check words it ("tools.json:
// /env/RUNNER_MODE: must not be a string matching ^(RUNNER_|TREELOOP_|GIT_)",
// where the full validator says "not failed").
func Parse(name string, data []byte) (Tools, error) {
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return Tools{}, fmt.Errorf("%s: %w", name, err)
	}
	if why := plainCheck(v); why != "" {
		return Tools{}, fmt.Errorf("%s: %s", name, why)
	}
	m, _ := v.(map[string]any)
	var t Tools
	if s, ok := m["model"].(string); ok {
		t.Model = s
	}
	t.ExtraArgs = strs(m["extra_args"])
	t.AllowedTools = strs(m["allowed_tools"])
	if env, ok := m["env"].(map[string]any); ok {
		t.Env = map[string]string{}
		for k, val := range env {
			t.Env[k], _ = val.(string)
		}
	}
	return t, nil
}

// plainCheck is the schema's check (TestPlainCheckAgreesWithSchema holds
// it to the full validator).
//
//go:generate go run ../schema/internal/schemagen -schema node_tools.v1 -check plainCheck -o check_gen.go

func strs(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Read reads node id's tools.json as commit base has it; ok is false when
// there is none.
func Read(repo *git.Repo, base, id string) (t Tools, ok bool, err error) {
	data, ok, err := repo.ShowFile(base, layout.NodeTools(id))
	return FromFile(git.File{Rev: base, Path: layout.NodeTools(id), Data: data, OK: ok, Err: err})
}

// FromFile is Read from tools.json as git.Repo.ShowFiles read it: ok is
// false when there is none.
func FromFile(f git.File) (t Tools, ok bool, err error) {
	if f.Err != nil || !f.OK {
		return Tools{}, false, f.Err
	}
	t, err = Parse(f.Path, f.Data)
	return t, err == nil, err
}

// Apply returns agent with t applied for backend: the model replaced,
// extra arguments appended (the allowed tools as the CLI's own flag), and
// the environment t adds (KEY=VALUE, sorted). Allowed tools for a backend
// that takes none are an error saying so.
func (t Tools) Apply(agent config.Agent) (config.Agent, []string, error) {
	if t.Model != "" {
		agent.Model = t.Model
	}
	agent.ExtraArgs = append(slices.Clone(agent.ExtraArgs), t.ExtraArgs...)
	if len(t.AllowedTools) > 0 {
		spec, _ := agentspec.Lookup(agent.Backend)
		if spec.AllowedTools == nil {
			return agent, nil, fmt.Errorf("allowed_tools are Claude Code's and Gemini CLI's; the %s backend takes none (set [agent] permission_mode, or remove them)", agent.Backend)
		}
		agent.ExtraArgs = append(agent.ExtraArgs, spec.AllowedTools(t.AllowedTools)...)
	}
	var env []string
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		env = append(env, k+"="+t.Env[k])
	}
	return agent, env, nil
}

// Summary is one line naming what t sets, for the iteration's log: the
// environment by its keys only (values may be secrets).
func (t Tools) Summary() string {
	var parts []string
	if t.Model != "" {
		parts = append(parts, "model="+t.Model)
	}
	if len(t.ExtraArgs) > 0 {
		parts = append(parts, "extra_args="+strings.Join(t.ExtraArgs, " "))
	}
	if len(t.Env) > 0 {
		parts = append(parts, "env="+strings.Join(slices.Sorted(maps.Keys(t.Env)), ","))
	}
	if len(t.AllowedTools) > 0 {
		parts = append(parts, "allowed_tools="+strings.Join(t.AllowedTools, ","))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}
