package agentout

import (
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
)

// plainSeeds are outputs at and across every bound of the schema.
func plainSeeds() []string {
	kid := func(title, goal, acc, next string) string {
		return `{"title":` + title + `,"goal":` + goal + `,"acceptance":` + acc + `,"next":` + next + `}`
	}
	ok := kid(`"T"`, `"g"`, `["a"]`, `"execute"`)
	many := func(n int, s string) string { return "[" + strings.TrimSuffix(strings.Repeat(s+",", n), ",") + "]" }
	q := func(s string) string { return `"` + s + `"` }
	out := func(status, summary, kids string) string {
		return `{"status":` + status + `,"summary":` + summary + `,"children":` + kids + `}`
	}
	return []string{
		out(`"done"`, `"s"`, `[]`), out(`"retry"`, `"s"`, `[]`), out(`"decomposed"`, `"s"`, many(1, ok)),
		out(`"decomposed"`, `"s"`, `[]`), out(`"done"`, `"s"`, many(1, ok)), out(`"skip"`, `"s"`, `[]`),
		out(`"done"`, `""`, `[]`), out(`"done"`, q(strings.Repeat("é", 16384)), `[]`), out(`"done"`, q(strings.Repeat("x", 16385)), `[]`),
		out(`"done"`, `1`, `[]`), out(`"done"`, `"s"`, `{}`), out(`1`, `"s"`, `[]`),
		out(`"decomposed"`, `"s"`, many(50, ok)), out(`"decomposed"`, `"s"`, many(51, ok)),
		out(`"decomposed"`, `"s"`, many(1, kid(`""`, `"g"`, `[]`, `"execute"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(q(strings.Repeat("ü", 256)), `""`, `[]`, `"decompose"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(q(strings.Repeat("x", 257)), `""`, `[]`, `"execute"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(`"T"`, q(strings.Repeat("x", 16385)), `[]`, `"execute"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(`"T"`, `"g"`, many(64, `"a"`), `"execute"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(`"T"`, `"g"`, many(65, `"a"`), `"execute"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(`"T"`, `"g"`, many(1, q(strings.Repeat("x", 4097))), `"execute"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(`"T"`, `"g"`, `[1]`, `"execute"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(`"T"`, `"g"`, `[]`, `"skip"`))),
		out(`"decomposed"`, `"s"`, many(1, kid(`"T"`, `null`, `[]`, `"execute"`))),
		out(`"decomposed"`, `"s"`, `[1]`),
		strings.Replace(out(`"decomposed"`, `"s"`, many(1, ok)), `"next"`, `"x":1,"next"`, 1),
		strings.Replace(out(`"decomposed"`, `"s"`, many(1, ok)), `"goal":"g",`, `"x":1,`, 1),
		`{"status":"done","summary":"s","children":[],"x":1}`, `{"status":"done","summary":"s","x":[]}`,
		`{"status":"done","summary":"s"}`, `[]`, `"done"`, `null`,
	}
}

// TestPlainlyValidAgreesWithSchema: the written-out schema accepts
// exactly what the full validator accepts, bound by bound.
func TestPlainlyValidAgreesWithSchema(t *testing.T) {
	accepted := 0
	for _, doc := range plainSeeds() {
		v, err := jsonstrict.Decode([]byte(doc))
		if err != nil {
			t.Fatalf("%.80s: %v", doc, err)
		}
		bySchema := len(full.Validate(schema.AgentOutput, v)) == 0
		if plainlyValid(v) != bySchema {
			t.Errorf("%.100s: plainlyValid %v, schema %v", doc, !bySchema, bySchema)
		}
		if bySchema {
			accepted++
		}
	}
	if accepted < 5 {
		t.Fatalf("only %d seeds valid", accepted)
	}
}

// FuzzPlainlyValid: whatever plainlyValid accepts, the schema accepts.
func FuzzPlainlyValid(f *testing.F) {
	for _, doc := range plainSeeds() {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsonstrict.Decode(data)
		if err != nil {
			return
		}
		if plainlyValid(v) && len(full.Validate(schema.AgentOutput, v)) > 0 {
			t.Fatalf("plainlyValid accepted what the schema refuses: %s", data)
		}
	})
}
