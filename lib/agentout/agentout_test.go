package agentout_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/agentout"
	"github.com/treeloop/treeloop/lib/schema"
	_ "github.com/treeloop/treeloop/lib/schema/full" // agentout.Parse words every problem with the full validator
	"github.com/treeloop/treeloop/lib/tree"
)

const (
	child    = `{"title":"Add login","goal":"users log in","acceptance":["tests pass","docs"],"next":"execute"}`
	child2   = `{"title":"Split API","goal":"","acceptance":[],"next":"decompose"}`
	schemaIs = "output does not match the agent output schema: "
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		name string
		data string
		mode string
		want agentout.Output
	}{
		{"done in execute mode", `{"status":"done","summary":"implemented it","children":[]}`, agentout.ModeExecute,
			agentout.Output{Status: "done", Summary: "implemented it"}},
		{"retry in execute mode", `{"status":"retry","summary":"tests still fail","children":[]}`, agentout.ModeExecute,
			agentout.Output{Status: "retry", Summary: "tests still fail"}},
		{"retry in decompose mode", `{"status":"retry","summary":"unclear","children":[]}`, agentout.ModeDecompose,
			agentout.Output{Status: "retry", Summary: "unclear"}},
		{"blocked in execute mode", `{"status":"blocked","summary":"Postgres or SQLite?","children":[]}`, agentout.ModeExecute,
			agentout.Output{Status: "blocked", Summary: "Postgres or SQLite?"}},
		{"blocked in decompose mode", `{"status":"blocked","summary":"Split by service or by layer?","children":[]}`, agentout.ModeDecompose,
			agentout.Output{Status: "blocked", Summary: "Split by service or by layer?"}},
		{"decomposed in decompose mode", `{"status":"decomposed","summary":"two parts","children":[` + child + `,` + child2 + `]}`, agentout.ModeDecompose,
			agentout.Output{Status: "decomposed", Summary: "two parts", Children: []tree.NewChild{
				{Title: "Add login", Goal: "users log in", Acceptance: []string{"tests pass", "docs"}, Next: "execute"},
				{Title: "Split API", Goal: "", Acceptance: nil, Next: "decompose"},
			}}},
		{"any key order and formatting", "{\n  \"children\": [],\n  \"summary\": \"s <&>\",\n  \"status\": \"done\"\n}\n", agentout.ModeExecute,
			agentout.Output{Status: "done", Summary: "s <&>"}},
		{"unicode summary", `{"status":"done","summary":"\u00e9t\u00e9 \ud83d\ude00","children":[]}`, agentout.ModeExecute,
			agentout.Output{Status: "done", Summary: "été 😀"}},
		{"50 children", `{"status":"decomposed","summary":"s","children":[` + strings.TrimSuffix(strings.Repeat(child2+",", 50), ",") + `]}`, agentout.ModeDecompose,
			agentout.Output{Status: "decomposed", Summary: "s", Children: slices.Repeat([]tree.NewChild{{Title: "Split API", Next: "decompose"}}, 50)}},
		{"summary of 16384 characters", `{"status":"done","summary":"` + strings.Repeat("é", 16384) + `","children":[]}`, agentout.ModeExecute,
			agentout.Output{Status: "done", Summary: strings.Repeat("é", 16384)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agentout.Parse([]byte(tt.data), tt.mode)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse =\n%#v\nwant\n%#v", got, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	big := `{"status":"done","summary":"` + strings.Repeat("a", agentout.MaxBytes) + `","children":[]}`
	tests := []struct {
		name string
		data string
		mode string
		want string
	}{
		// The status must suit the mode (DESIGN.md decision 3).
		{"done in decompose mode", `{"status":"done","summary":"s","children":[]}`, agentout.ModeDecompose,
			`status "done" is not allowed in decompose mode (allowed: decomposed, retry, blocked)`},
		{"decomposed in execute mode", `{"status":"decomposed","summary":"s","children":[` + child + `]}`, agentout.ModeExecute,
			`status "decomposed" is not allowed in execute mode (allowed: done, retry, blocked)`},

		// children is [] unless decomposed, and non-empty when decomposed.
		{"done with children", `{"status":"done","summary":"s","children":[` + child + `]}`, agentout.ModeExecute,
			schemaIs + "children: maximum 0 items required, but found 1 items"},
		{"retry with children", `{"status":"retry","summary":"s","children":[` + child + `,` + child2 + `]}`, agentout.ModeDecompose,
			schemaIs + "children: maximum 0 items required, but found 2 items"},
		{"decomposed with no children", `{"status":"decomposed","summary":"s","children":[]}`, agentout.ModeDecompose,
			schemaIs + "children: minimum 1 items required, but found 0 items"},
		{"51 children", `{"status":"decomposed","summary":"s","children":[` + strings.TrimSuffix(strings.Repeat(child2+",", 51), ",") + `]}`, agentout.ModeDecompose,
			schemaIs + "children: maximum 50 items required, but found 51 items"},

		// Extra and missing keys.
		{"extra key", `{"status":"done","summary":"s","children":[],"x":1}`, agentout.ModeExecute,
			schemaIs + "additionalProperties 'x' not allowed"},
		{"extra key in a child", `{"status":"decomposed","summary":"s","children":[{"title":"t","goal":"","acceptance":[],"next":"execute","id":"x"}]}`, agentout.ModeDecompose,
			schemaIs + "children/0: additionalProperties 'id' not allowed"},
		{"missing children", `{"status":"done","summary":"s"}`, agentout.ModeExecute,
			schemaIs + "missing properties: 'children'"},
		{"missing everything", `{}`, agentout.ModeExecute,
			schemaIs + "missing properties: 'status', 'summary', 'children'"},
		{"child missing everything", `{"status":"decomposed","summary":"s","children":[{}]}`, agentout.ModeDecompose,
			schemaIs + "children/0: missing properties: 'title', 'goal', 'acceptance', 'next'"},

		// Wrong types and values.
		{"not an object", `[]`, agentout.ModeExecute, schemaIs + "expected object, but got array"},
		{"string", `"done"`, agentout.ModeExecute, schemaIs + "expected object, but got string"},
		{"wrong types", `{"status":1,"summary":2,"children":"x"}`, agentout.ModeExecute,
			schemaIs + `children: expected array, but got string; status: value must be one of "done", "retry", "decomposed", "blocked"; summary: expected string, but got number`},
		{"unknown status", `{"status":"finished","summary":"s","children":[]}`, agentout.ModeExecute,
			schemaIs + `status: value must be one of "done", "retry", "decomposed", "blocked"`},
		{"status case matters", `{"status":"Done","summary":"s","children":[]}`, agentout.ModeExecute,
			schemaIs + `status: value must be one of "done", "retry", "decomposed", "blocked"`},
		{"null summary", `{"status":"done","summary":null,"children":[]}`, agentout.ModeExecute,
			schemaIs + "summary: expected string, but got null"},
		{"empty summary", `{"status":"done","summary":"","children":[]}`, agentout.ModeExecute,
			schemaIs + "summary: length must be >= 1, but got 0"},
		{"summary too long", `{"status":"done","summary":"` + strings.Repeat("a", 16385) + `","children":[]}`, agentout.ModeExecute,
			schemaIs + "summary: length must be <= 16384, but got 16385"},
		{"bad child fields", `{"status":"decomposed","summary":"s","children":[{"title":"","goal":1,"acceptance":[2],"next":"x"}]}`, agentout.ModeDecompose,
			schemaIs + `children/0/acceptance/0: expected string, but got number; children/0/goal: expected string, but got number; children/0/next: value must be one of "execute", "decompose"; children/0/title: length must be >= 1, but got 0`},
		{"child not an object", `{"status":"decomposed","summary":"s","children":["t"]}`, agentout.ModeDecompose,
			schemaIs + "children/0: expected object, but got string"},
		{"child title too long", `{"status":"decomposed","summary":"s","children":[{"title":"` + strings.Repeat("t", 257) + `","goal":"","acceptance":[],"next":"execute"}]}`, agentout.ModeDecompose,
			schemaIs + "children/0/title: length must be <= 256, but got 257"},

		// Control characters (git refuses U+0000 in a commit message).
		{"control character in the summary", `{"status":"done","summary":"s\u0000","children":[]}`, agentout.ModeExecute,
			"summary holds the control character U+0000 (only newline and tab are allowed)"},
		{"control character in a child", `{"status":"decomposed","summary":"s","children":[{"title":"t","goal":"g\u0007","acceptance":["a","b\u001b"],"next":"execute"}]}`, agentout.ModeDecompose,
			"children[0].goal holds the control character U+0007 (only newline and tab are allowed); children[0].acceptance[1] holds the control character U+001B (only newline and tab are allowed)"},

		// Not JSON, or not strict JSON.
		{"empty", ``, agentout.ModeExecute, "output is not valid JSON: empty document"},
		{"trailing data", `{"status":"done","summary":"s","children":[]} {}`, agentout.ModeExecute,
			"output is not valid JSON: line 1 column 47: invalid character '{' after top-level value"},
		{"duplicate key", `{"status":"done","status":"retry","summary":"s","children":[]}`, agentout.ModeExecute,
			`output is not valid JSON: line 1 column 18: duplicate key "status"`},
		{"bom", "\xEF\xBB\xBF{}", agentout.ModeExecute,
			"output is not valid JSON: line 1 column 1: starts with a UTF-8 byte order mark; save the file without it"},
		{"markdown fence", "```json\n{}\n```", agentout.ModeExecute,
			"output is not valid JSON: line 1 column 1: invalid character '`' at start of value"},

		// Size.
		{"over MaxBytes", big, agentout.ModeExecute,
			"output is 1048620 bytes, more than the 1048576 allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := agentout.Parse([]byte(tt.data), tt.mode)
			if err == nil {
				t.Fatalf("Parse = %+v, want error %q", got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse error =\n%q\nwant\n%q", err.Error(), tt.want)
			}
			if !reflect.DeepEqual(got, agentout.Output{}) {
				t.Errorf("Parse returned %+v with an error", got)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestParseSizeBoundary: exactly MaxBytes is read (then judged), one more
// byte is refused before decoding.
func TestParseSizeBoundary(t *testing.T) {
	doc := func(n int) []byte {
		s := `{"status":"done","summary":"x","children":[]}`
		return []byte(s + strings.Repeat(" ", n-len(s)))
	}
	if _, err := agentout.Parse(doc(agentout.MaxBytes), agentout.ModeExecute); err != nil {
		t.Errorf("Parse of exactly MaxBytes: %v", err)
	}
	_, err := agentout.Parse(doc(agentout.MaxBytes+1), agentout.ModeExecute)
	if err == nil || err.Error() != "output is 1048577 bytes, more than the 1048576 allowed" {
		t.Errorf("Parse of MaxBytes+1: %v", err)
	}
}

func TestAllowed(t *testing.T) {
	tests := []struct {
		mode string
		want []string
	}{
		{agentout.ModeExecute, []string{"done", "retry", "blocked"}},
		{agentout.ModeDecompose, []string{"decomposed", "retry", "blocked"}},
	}
	for _, tt := range tests {
		if got := agentout.Allowed(tt.mode); !slices.Equal(got, tt.want) {
			t.Errorf("Allowed(%q) = %v, want %v", tt.mode, got, tt.want)
		}
	}
	if agentout.ModeExecute != tree.NextExecute || agentout.ModeDecompose != tree.NextDecompose {
		t.Errorf("modes are not the tree's next values")
	}
}

// TestParseFeedsTransition: a decomposed output's children become valid
// tree nodes through tree.Transition.
func TestParseFeedsTransition(t *testing.T) {
	out, err := agentout.Parse([]byte(`{"status":"decomposed","summary":"s","children":[`+child+`,`+child2+`]}`), agentout.ModeDecompose)
	if err != nil {
		t.Fatal(err)
	}
	root := &tree.Node{ID: "root", Title: "R", Next: tree.NextDecompose, MaxAttempts: 3}
	if err := tree.Transition(root, "root", tree.Outcome{Status: out.Status, Guard: tree.GuardSkipped, Children: out.Children}, 4); err != nil {
		t.Fatal(err)
	}
	back, ps := tree.Load(tree.Encode(root))
	if len(ps) > 0 {
		t.Fatalf("tree invalid: %v", ps)
	}
	if len(back.Children) != 2 || back.Children[0].ID != "root.1" || back.Children[1].Next != tree.NextDecompose {
		t.Errorf("children = %s", tree.Encode(back))
	}
}

// TestParseWithoutFullValidator: in a program that does not link the full
// validator (step-begin, which runs tree-update in process to recover an
// iteration), Parse judges as the schema does, by its plain check, and
// words the first problem: where (none at the document's root) and what.
func TestParseWithoutFullValidator(t *testing.T) {
	defer schema.SetValidator(schema.SetValidator(nil))
	if _, err := agentout.Parse([]byte(`{"status":"done","summary":"s","children":[]}`), agentout.ModeExecute); err != nil {
		t.Fatalf("valid output refused: %v", err)
	}
	for _, tt := range []struct{ data, want string }{
		{`{"status":"finished","summary":"s","children":[]}`, schemaIs + "status: not one of done, retry, decomposed, blocked"},
		{`{"status":"decomposed","summary":"s","children":[{"title":"","goal":"","acceptance":[],"next":"execute"}]}`, schemaIs + "children/0/title: not a string of 1 to 256 characters"},
		{`[]`, schemaIs + "not a JSON object"},
	} {
		_, err := agentout.Parse([]byte(tt.data), agentout.ModeDecompose)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%s) = %v, want %q", tt.data, err, tt.want)
		}
	}
}
