// Package schema validates decoded JSON documents against treeloop's embedded
// JSON Schemas (draft 2020-12) through santhosh-tekuri/jsonschema/v5.
package schema

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/treeloop/treeloop/schemas"
)

// Kind names one embedded schema.
type Kind string

// The embedded schemas.
const (
	TaskTree    Kind = "task_tree.v1"
	AgentOutput Kind = "agent_output.v1"
	RunState    Kind = "run_state.v1"
	RunRecord   Kind = "run_record.v1"
	EvalResult  Kind = "eval_result.v1"
	EvalSummary Kind = "eval_summary.v1"
)

// Source returns the embedded schema bytes for k.
func Source(k Kind) []byte {
	switch k {
	case TaskTree:
		return schemas.TaskTreeV1
	case AgentOutput:
		return schemas.AgentOutputV1
	case RunState:
		return schemas.RunStateV1
	case RunRecord:
		return schemas.RunRecordV1
	case EvalResult:
		return schemas.EvalResultV1
	case EvalSummary:
		return schemas.EvalSummaryV1
	}
	panic("schema: unknown kind " + string(k))
}

// Violation is one schema error: where in the instance (a JSON pointer such as
// "/children/0/attempts") and what is wrong.
type Violation struct {
	Pointer string
	Message string
}

var (
	mu       sync.Mutex
	compiled = map[Kind]*jsonschema.Schema{}
)

func get(k Kind) *jsonschema.Schema {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[k]; ok {
		return s
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	url := "mem:///" + string(k) + ".json"
	if err := c.AddResource(url, bytes.NewReader(Source(k))); err != nil {
		panic(fmt.Sprintf("schema: embedded %s: %v", k, err))
	}
	s, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("schema: embedded %s: %v", k, err))
	}
	compiled[k] = s
	return s
}

// Validate checks v, a document decoded into map[string]any, []any, string,
// float64 or json.Number, bool and nil, against the schema k. It returns
// every leaf violation, sorted by pointer then message; nil means valid.
func Validate(k Kind, v any) []Violation {
	err := get(k).Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	var out []Violation
	seen := map[Violation]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			v := Violation{Pointer: e.InstanceLocation, Message: stableMessage(e.Message)}
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pointer != out[j].Pointer {
			return out[i].Pointer < out[j].Pointer
		}
		return out[i].Message < out[j].Message
	})
	return out
}

// stableMessage sorts the property names of an additionalProperties
// message, which the validator lists in map order, so reports are
// deterministic.
func stableMessage(msg string) string {
	const pre, post = "additionalProperties ", " not allowed"
	if !strings.HasPrefix(msg, pre) || !strings.HasSuffix(msg, post) {
		return msg
	}
	names := strings.Split(strings.TrimSuffix(strings.TrimPrefix(msg, pre), post), ", ")
	sort.Strings(names)
	return pre + strings.Join(names, ", ") + post
}

// Pointer splits a JSON pointer (RFC 6901) into its unescaped tokens.
func Pointer(p string) []string {
	if p == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		s = strings.ReplaceAll(s, "~1", "/")
		parts[i] = strings.ReplaceAll(s, "~0", "~")
	}
	return parts
}
