package cli

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/jsondoc"
)

// Get is the --get flag of every command that prints JSON: one
// value of the JSON result by a gjson path (github.com/tidwall/gjson), so
// scripts read it without jq.
type Get struct {
	Get string `name:"get" placeholder:"PATH" help:"Print one value of the JSON result, by a gjson path (id, usage.cost_usd, recent.0.node_id, recent.#): strings bare, anything else as JSON. Exit 1 when the path matches nothing."`
}

// Wanted reports whether --get was given.
func (g Get) Wanted() bool { return g.Get != "" }

// PrintJSON prints v: the whole of it when --get is not given, else the
// value at the --get path. A path that matches nothing is an error with
// exit code 1 and one line.
func (g Get) PrintJSON(env *Env, v any) error {
	if g.Get == "" {
		if err := env.PrintJSON(v); err != nil {
			return exit.Errorf(exit.RunnerError, "write stdout: %w", err)
		}
		return nil
	}
	data, err := jsondoc.Marshal(v)
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	return g.print(env, data)
}

// PrintJSONIfAny is PrintJSON for a command whose exit code already says
// why a value may be missing (tree-select on a complete tree has no id):
// a --get path that matches nothing prints nothing and is no error.
func (g Get) PrintJSONIfAny(env *Env, v any) error {
	if g.Get != "" {
		data, err := jsondoc.Marshal(v)
		if err != nil {
			return exit.Wrap(exit.RunnerError, err)
		}
		if !gjson.GetBytes(data, g.Get).Exists() {
			return nil
		}
	}
	return g.PrintJSON(env, v)
}

// PrintJSONBytes is PrintJSON for a document already encoded.
func (g Get) PrintJSONBytes(env *Env, data []byte) error {
	if g.Get == "" {
		_, err := env.Stdout.Write(data)
		return err
	}
	return g.print(env, data)
}

func (g Get) print(env *Env, data []byte) error {
	r := gjson.GetBytes(data, g.Get)
	if !r.Exists() {
		return exit.Errorf(exit.Negative, "--get %s: no value at this path", g.Get)
	}
	out := r.Raw
	if r.Type == gjson.String {
		out = r.Str
	}
	_, err := fmt.Fprintln(env.Stdout, out)
	return err
}

// ShellQuote is s in single quotes, safe in a line the porcelain evals
// (any byte but NUL, newlines included).
func ShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
