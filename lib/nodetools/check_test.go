package nodetools

import (
	"net/url"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
)

// checkSeeds are tools.json documents at and across every bound of the
// schema: each property of each type, empty strings, the names env
// allows and the prefixes it refuses, a property the schema does not
// name.
func checkSeeds() []string {
	return []string{
		`{}`, `{"model":"m"}`, `{"model":""}`, `{"model":1}`, `{"model":null}`,
		`{"extra_args":[]}`, `{"extra_args":["-x",""]}`, `{"extra_args":[1]}`, `{"extra_args":"-x"}`,
		`{"allowed_tools":["Bash(go test:*)"]}`, `{"allowed_tools":["Read","Bash(go test:*)"]}`, `{"allowed_tools":[""]}`, `{"allowed_tools":[true]}`, `{"allowed_tools":{}}`,
		`{"env":{}}`, `{"env":{"A":"1","_b9":""}}`, `{"env":{"A":1}}`, `{"env":{"A":null}}`, `{"env":[]}`,
		`{"env":{"9A":"x"}}`, `{"env":{"A-B":"x"}}`, `{"env":{"":"x"}}`, `{"env":{"A B":"x"}}`,
		`{"env":{"RUNNER_MODE":"x"}}`, `{"env":{"TREELOOP_X":"x"}}`, `{"env":{"GIT_DIR":"x"}}`,
		`{"env":{"RUNNER":"x","GIT":"x","XRUNNER_Y":"x","runner_x":"x"}}`, `{"env":{"Ä":"x"}}`,
		`{"env":{"OK":"x","RUNNER_Z":"x"}}`, `{"env":{"OK":2,"RUNNER_Z":"x"}}`,
		`{"model":"m","extra_args":["a"],"env":{"K":"v"},"allowed_tools":["t"]}`,
		`{"x":1}`, `{"model":"m","x":1}`, `[]`, `"m"`, `null`, `1`,
	}
}

// TestPlainCheckAgreesWithSchema: the generated check accepts exactly
// what the full validator accepts, seed by seed, and a problem it finds
// points where the validator's first one does or inside it.
func TestPlainCheckAgreesWithSchema(t *testing.T) {
	accepted := 0
	for _, doc := range checkSeeds() {
		v, err := jsonstrict.Decode([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		vs := full.Validate(schema.NodeTools, v)
		why := plainCheck(v)
		if (why == "") != (len(vs) == 0) {
			t.Errorf("%s: plain check %q, schema %v", doc, why, vs)
			continue
		}
		if why == "" {
			accepted++
			continue
		}
		at, _, _ := strings.Cut(why, ": ")
		if at == "/" {
			at = ""
		}
		if found := func() bool {
			for _, x := range vs {
				ptr, err := url.PathUnescape(x.Pointer) // the validator escapes a name's bytes
				if err == nil && strings.HasPrefix(at, ptr) {
					return true
				}
			}
			return false
		}(); !found {
			t.Errorf("%s: plain check at %q, schema's problems at %v", doc, at, vs)
		}
	}
	if accepted < 8 {
		t.Fatalf("only %d seeds valid", accepted)
	}
}

// FuzzPlainCheck: the generated check and the full validator agree on
// any document.
func FuzzPlainCheck(f *testing.F) {
	for _, doc := range checkSeeds() {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsonstrict.Decode(data)
		if err != nil {
			return
		}
		if (plainCheck(v) == "") != (len(full.Validate(schema.NodeTools, v)) == 0) {
			t.Fatalf("the plain check and the schema disagree on %s: %q", data, plainCheck(v))
		}
	})
}

// TestParseWords: a refusal names the document, then the schema's first
// problem as the plain check words it, in any program.
func TestParseWords(t *testing.T) {
	for doc, want := range map[string]string{
		`{"env":{"RUNNER_MODE":"execute"}}`: "tools.json: /env/RUNNER_MODE: must not be a string matching ^(RUNNER_|TREELOOP_|GIT_)",
		`{"env":{"9A":"x"}}`:                "tools.json: /env/9A: not a string matching ^[A-Za-z_][A-Za-z0-9_]*$",
		`{"env":{"A":1}}`:                   "tools.json: /env/A: not a string",
		`{"model":""}`:                      "tools.json: /model: not a non-empty string",
		`{"x":1}`:                           "tools.json: /x: unknown property",
	} {
		if _, err := Parse("tools.json", []byte(doc)); err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %s", doc, err, want)
		}
	}
}
