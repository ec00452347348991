// Package full is the full JSON Schema validator of lib/schema, through
// santhosh-tekuri/jsonschema/v5. A package that validates against a
// schema calls Validate, so every program that may validate links it
// (lib/eval); a program that links it also gets schema.Words, which the
// fast paths use to word what they refuse (tree-validate, runner-status,
// runner-ui import it for that; the step's commands do not, and word
// through tree-validate instead, schema.WordsOrHelper). A program compiles a
// schema only when it validates against it. Its cost is v5's package
// init, paid at every start of a program that links it, whether it
// validates or not (bench/fastpaths.md).
package full

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/treeloop/treeloop/lib/schema"
)

func init() { schema.SetValidator(Validate) }

var (
	mu       sync.Mutex
	compiled = map[schema.Kind]*jsonschema.Schema{}
)

func get(k schema.Kind) *jsonschema.Schema {
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[k]; ok {
		return s
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	url := "mem:///" + string(k) + ".json"
	if err := c.AddResource(url, bytes.NewReader(schema.Source(k))); err != nil {
		panic(fmt.Sprintf("schema: embedded %s: %v", k, err))
	}
	s, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("schema: embedded %s: %v", k, err))
	}
	compiled[k] = s
	return s
}

// Validate checks v, a document decoded into map[string]any, []any,
// string, float64 or json.Number, bool and nil, against the schema k. It
// returns every leaf violation, sorted by pointer then message; nil means
// valid.
func Validate(k schema.Kind, v any) []schema.Violation {
	err := get(k).Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []schema.Violation{{Message: err.Error()}}
	}
	var out []schema.Violation
	seen := map[schema.Violation]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			v := schema.Violation{Pointer: e.InstanceLocation, Message: stableMessage(e.Message)}
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
