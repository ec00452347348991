package schema_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
	"github.com/treeloop/treeloop/schemas"
)

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := jsonstrict.Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

func TestSource(t *testing.T) {
	tests := []struct {
		kind schema.Kind
		want []byte
		id   string
	}{
		{schema.TaskTree, schemas.TaskTreeV1, "https://treeloop.dev/schemas/task_tree/v1.schema.json"},
		{schema.AgentOutput, schemas.AgentOutputV1, "https://treeloop.dev/schemas/agent_output/v1.schema.json"},
		{schema.RunState, schemas.RunStateV1, "https://treeloop.dev/schemas/run_state/v1.schema.json"},
	}
	for _, tt := range tests {
		got := schema.Source(tt.kind)
		if !bytes.Equal(got, tt.want) || len(got) == 0 {
			t.Errorf("Source(%s) is not the embedded schema", tt.kind)
		}
		var doc struct {
			Schema string `json:"$schema"`
			ID     string `json:"$id"`
		}
		if err := json.Unmarshal(got, &doc); err != nil {
			t.Fatalf("Source(%s) is not JSON: %v", tt.kind, err)
		}
		if doc.Schema != "https://json-schema.org/draft/2020-12/schema" || doc.ID != tt.id {
			t.Errorf("Source(%s): $schema %q $id %q, want draft 2020-12 and %q", tt.kind, doc.Schema, doc.ID, tt.id)
		}
	}
}

// TestKinds: Kinds names every schema the repository embeds
// (schemas/*.schema.json), each once, each with its Source.
func TestKinds(t *testing.T) {
	files, err := filepath.Glob("../../schemas/*.schema.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("schemas: %v, %d files", err, len(files))
	}
	var want []schema.Kind
	for _, f := range files {
		want = append(want, schema.Kind(strings.TrimSuffix(filepath.Base(f), ".schema.json")))
	}
	got := slices.Sorted(slices.Values(schema.Kinds))
	if !slices.Equal(got, want) {
		t.Errorf("Kinds = %v, want %v", got, want)
	}
	for _, k := range schema.Kinds {
		if len(schema.Source(k)) == 0 {
			t.Errorf("Source(%s) is empty", k)
		}
	}
}

func TestSourceUnknownKindPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "schema: unknown kind nope" {
			t.Errorf("recover() = %v, want the unknown kind panic", r)
		}
	}()
	schema.Source("nope")
}

const validNode = `{"id":"root","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":0,"max_attempts":3,"children":[]}`

// TestValidate checks Validate against each embedded schema: nil for valid
// documents, every violation (pointer and message) otherwise, sorted.
func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		kind schema.Kind
		doc  string
		want []schema.Violation
	}{
		{"tree valid", schema.TaskTree, validNode, nil},
		{"tree not an object", schema.TaskTree, `[]`, []schema.Violation{{"", "expected object, but got array"}}},
		{"tree missing field", schema.TaskTree,
			`{"id":"root","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":0,"children":[]}`,
			[]schema.Violation{{"", "missing properties: 'max_attempts'"}}},
		{"tree violations sorted by pointer", schema.TaskTree,
			`{"id":"root","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":0,"max_attempts":3,"children":[` +
				`{"id":"b","order":1,"title":"","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":-1,"max_attempts":3,"children":[]}],` +
				`"x":1}`,
			[]schema.Violation{
				{"", "additionalProperties 'x' not allowed"},
				{"/children/0/attempts", "must be >= 0 but found -1"},
				{"/children/0/title", "length must be >= 1, but got 0"},
			}},
		{"agent output valid", schema.AgentOutput, `{"status":"done","summary":"s","children":[]}`, nil},
		{"agent output decomposed without children", schema.AgentOutput, `{"status":"decomposed","summary":"s","children":[]}`,
			[]schema.Violation{{"/children", "minimum 1 items required, but found 0 items"}}},
		{"run state valid", schema.RunState, `{"run_id":null,"next_iter":1,"last_status":null,"last_summary":null,"last_guard":null}`, nil},
		{"run state valid full", schema.RunState, `{"run_id":"run-1a2b3c4d","next_iter":7,"last_status":"agent_error","last_summary":"x","last_guard":"skipped","last_iter":6,"last_node":"auth"}`, nil},
		{"run state invalid", schema.RunState, `{"run_id":"../x","next_iter":0,"last_status":null,"last_summary":1,"last_guard":"maybe"}`,
			[]schema.Violation{
				{"/last_guard", `value must be one of "pass", "fail", "skipped", <nil>`}, // the library prints null as <nil>
				{"/last_summary", "expected string or null, but got number"},
				{"/next_iter", "must be >= 1 but found 0"},
				{"/run_id", "does not match pattern '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'"},
			}},
		{"pointer escapes", schema.RunState, `{"run_id":null,"next_iter":1,"last_status":null,"last_summary":null,"last_guard":null,"a/b":1}`,
			[]schema.Violation{{"", "additionalProperties 'a/b' not allowed"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := full.Validate(tt.kind, decode(t, tt.doc))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Validate = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestValidateDeterministic validates the same invalid document repeatedly
// (and concurrently, the compiled schemas are shared) and expects the same
// answer every time.
func TestValidateDeterministic(t *testing.T) {
	doc := decode(t, `{"status":"later","summary":"","children":[{"title":"","goal":1,"acceptance":[2],"next":"x"}]}`)
	want := []schema.Violation{
		{"/children", "maximum 0 items required, but found 1 items"}, // status is not decomposed
		{"/children/0/acceptance/0", "expected string, but got number"},
		{"/children/0/goal", "expected string, but got number"},
		{"/children/0/next", `value must be one of "execute", "decompose"`},
		{"/children/0/title", "length must be >= 1, but got 0"},
		{"/status", `value must be one of "done", "retry", "decomposed", "blocked"`},
		{"/summary", "length must be >= 1, but got 0"},
	}
	done := make(chan []schema.Violation)
	for range 8 {
		go func() { done <- full.Validate(schema.AgentOutput, doc) }()
	}
	for range 8 {
		if got := <-done; !reflect.DeepEqual(got, want) {
			t.Fatalf("Validate = %#v\nwant %#v", got, want)
		}
	}
}

func TestPointer(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"/children/0/attempts", []string{"children", "0", "attempts"}},
		{"/a~1b", []string{"a/b"}},
		{"/a~0b", []string{"a~b"}},
		{"/~01", []string{"~1"}}, // ~1 is decoded before ~0 (RFC 6901 §4)
		{"/~10", []string{"/0"}},
		{"/a//b", []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		if got := schema.Pointer(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Pointer(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

// TestMatchersAgreeWithRegexp: each plain matcher of a schema pattern
// answers as the pattern's regexp on strings at and across its edges.
func TestMatchersAgreeWithRegexp(t *testing.T) {
	inputs := []string{"", "a", "A", "0", "-", "_", ".", "a-b", "a.b_c", "-a", ".a", "a b", "é", "a\n", "aé",
		strings.Repeat("a", 127), strings.Repeat("a", 128), strings.Repeat("a", 129),
		strings.Repeat("f", 39), strings.Repeat("f", 40), strings.Repeat("0", 64), strings.Repeat("a", 65), strings.Repeat("F", 40),
		"hook_failed", "hook9", "9hook", "Hook", "hook-failed",
		"`", "{", "0a", "_a", "a0", "a9", "a_", "az", "a/", "a:", "a`", "a{", "aA", "a-"}
	sha := strings.Repeat("0", 39)
	for _, last := range []string{"0", "9", "a", "f", "/", ":", "`", "g", "A"} {
		inputs = append(inputs, sha+last)
	}
	for pattern, match := range schema.Matchers {
		re := regexp.MustCompile(pattern)
		for _, s := range inputs {
			if match(s) != re.MatchString(s) || schema.Match(pattern, s) != re.MatchString(s) {
				t.Errorf("%s on %q: plain %v, regexp %v", pattern, s, match(s), re.MatchString(s))
			}
		}
	}
	if !schema.Match(`^x+$`, "xx") || schema.Match(`^x+$`, "xy") {
		t.Error("Match through a regexp")
	}
}
