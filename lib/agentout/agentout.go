// Package agentout parses and validates agent output (DESIGN.md decision 3):
// one JSON object {"status", "summary", "children"} checked against the
// embedded agent_output v1 schema and against the mode of the iteration.
package agentout

import (
	"errors"
	"fmt"
	"strings"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/tree"
)

// MaxBytes is the largest output file accepted (1 MiB).
const MaxBytes = schema.AgentOutputMaxBytes

// Modes of an iteration, taken from the selected leaf's next field.
const (
	ModeExecute   = tree.NextExecute
	ModeDecompose = tree.NextDecompose
)

// Output is a validated agent output.
type Output struct {
	Status   string          `json:"status"`
	Summary  string          `json:"summary"`
	Children []tree.NewChild `json:"children"`
}

// Allowed lists the statuses an agent may report in mode.
func Allowed(mode string) []string { return tree.AgentStatuses(mode) }

// Parse decodes data strictly, validates it against the schema and checks
// the status is allowed in mode (execute: done, retry or blocked;
// decompose: decomposed, retry or blocked). The error is one line. The
// schema's verdict is the plain check's (check_gen.go, which agrees with
// the schema); a program that links the full validator (lib/schema/full:
// tree-update) words every problem, and so does one that finds its helper
// beside it (agent-exec, step-end: schema.WordsOrHelper); any other the
// first one.
func Parse(data []byte, mode string) (Output, error) {
	if len(data) > MaxBytes {
		return Output{}, fmt.Errorf("output is %d bytes, more than the %d allowed", len(data), MaxBytes)
	}
	v, err := jsonstrict.Decode(data)
	if err != nil {
		return Output{}, fmt.Errorf("output is not valid JSON: %w", err)
	}
	// Output the schema plainly accepts skips compiling it; anything
	// else is worded by the schema where the program links it.
	if why := plainCheck(v); why != "" {
		return Output{}, fmt.Errorf("output does not match the agent output schema: %s", schemaWords(v, why))
	}
	m := v.(map[string]any)
	o := Output{Status: m["status"].(string), Summary: m["summary"].(string)}
	for _, c := range m["children"].([]any) {
		cm := c.(map[string]any)
		nc := tree.NewChild{Title: cm["title"].(string), Goal: cm["goal"].(string), Next: cm["next"].(string)}
		if e, ok := cm["evidence"].(string); ok {
			nc.Evidence = e
		}
		for _, a := range cm["acceptance"].([]any) {
			nc.Acceptance = append(nc.Acceptance, a.(string))
		}
		o.Children = append(o.Children, nc)
	}
	if err := controlChars(o); err != nil {
		return Output{}, err
	}
	ok := false
	for _, s := range Allowed(mode) {
		ok = ok || s == o.Status
	}
	if !ok {
		return Output{}, fmt.Errorf("status %q is not allowed in %s mode (allowed: %s)", o.Status, mode, strings.Join(Allowed(mode), ", "))
	}
	return o, nil
}

// schemaWords words what the schema refuses in v, which the plain check
// refused with why ("<pointer>: <what>"): every problem, by the full
// validator, where the program links it or has its helper beside it
// (schema.WordsOrHelper), else why.
func schemaWords(v any, why string) string {
	vs, linked := schema.WordsOrHelper(schema.AgentOutput, v)
	if !linked || len(vs) == 0 {
		loc, what, _ := strings.Cut(why, ": ")
		if loc = strings.TrimPrefix(loc, "/"); loc == "" {
			return what
		}
		return loc + ": " + what
	}
	msgs := make([]string, len(vs))
	for i, x := range vs {
		loc := strings.TrimPrefix(x.Pointer, "/")
		if loc == "" {
			msgs[i] = x.Message
		} else {
			msgs[i] = loc + ": " + x.Message
		}
	}
	return strings.Join(msgs, "; ")
}

// plainlyValid reports whether the schema accepts v, by its plain check
// (check_gen.go, generated from schemas/agent_output.v1.schema.json);
// TestPlainlyValidAgreesWithSchema and FuzzPlainlyValid hold it to the
// full validator.
//
//go:generate go run ../schema/internal/schemagen -schema agent_output.v1 -check plainCheck -o check_gen.go
func plainlyValid(v any) bool { return plainCheck(v) == "" }

// controlChars refuses a control character other than newline and tab in
// the text the runner writes on (tree.ControlChar): the summary goes into
// the iteration's commit message, which git refuses with U+0000.
func controlChars(o Output) error {
	field := func(name, text string) error {
		if r, ok := tree.ControlChar(text); ok {
			return tree.ControlProblem(name, r)
		}
		return nil
	}
	if err := field("summary", o.Summary); err != nil {
		return err
	}
	for i, c := range o.Children {
		at := fmt.Sprintf("children[%d].", i)
		err := errors.Join(field(at+"title", c.Title), field(at+"goal", c.Goal))
		for k, a := range c.Acceptance {
			err = errors.Join(err, field(fmt.Sprintf("%sacceptance[%d]", at, k), a))
		}
		if err != nil {
			return errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	return nil
}
