package treevalidate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/schema"
	_ "github.com/treeloop/treeloop/lib/schema/full" // the command links it: tree-validate words every schema problem
	"github.com/treeloop/treeloop/lib/tree"
)

// sample is a root over a passed leaf "a" and an open leaf "b".
func sample() *tree.Node {
	leaf := func(id string, order int64, passes bool) *tree.Node {
		return &tree.Node{ID: id, Order: order, Title: "T " + id, Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, Passes: passes, MaxAttempts: 3, Children: []*tree.Node{}}
	}
	return &tree.Node{ID: "root", Title: "Root", Goal: "g", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3,
		Children: []*tree.Node{leaf("a", 1, true), leaf("b", 2, false)}}
}

func writeFile(t *testing.T, dir, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(dir string, stdin string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// Flags that cannot go together are usage errors, each saying which.
func TestFlagCombinations(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--selected", "b"}, "--selected and --status go together"},
		{[]string{"--selected", "b", "--status", "done"}, "--selected needs --prev, --prev-rev or --staged"},
		{[]string{"--staged", "-"}, "--staged reads the index"},
		{[]string{"--staged", "--by", "loop"}, "--by goes with --prev or --prev-rev"},
		{[]string{"--audit", "--staged"}, "--audit checks a tree against HEAD's history"},
	}
	for _, tt := range tests {
		code, _, errs := run(t.TempDir(), "", tt.args...)
		if code != exit.Usage || !strings.Contains(errs, tt.want) {
			t.Errorf("%q: exit %d %q, want %q", tt.args, code, errs, tt.want)
		}
	}
}

// Against a previous tree, a passed node edited is a problem, and so is a
// runner-owned field a human changes; the same edit of an open node's
// title is not. With --json the report counts the nodes and lists the
// problems.
func TestAgainstPrevious(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "prev.json", tree.Encode(sample()))
	next := sample()
	next.Children[1].Title = "B retitled"
	writeFile(t, dir, "next.json", tree.Encode(next))
	if code, _, errs := run(dir, "", "next.json", "--prev", "prev.json"); code != exit.OK || errs != "" {
		t.Fatalf("an open node retitled: exit %d %q", code, errs)
	}
	next.Children[0].Title = "A retitled"
	next.Children[1].Attempts = 2
	writeFile(t, dir, "next.json", tree.Encode(next))
	code, _, errs := run(dir, "", "next.json", "--prev", "prev.json")
	if code != exit.Negative {
		t.Fatalf("a passed node retitled: exit %d %q", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if len(lines) != 2 || !strings.Contains(errs, "next.json: ") || !strings.Contains(errs, "root/a") || !strings.Contains(errs, "attempts") {
		t.Fatalf("stderr %q: want one line for a's edit and one for b's attempts", errs)
	}
	code, out, _ := run(dir, "", "next.json", "--prev", "prev.json", "--json")
	if code != exit.Negative || !strings.Contains(out, `"valid": false`) || !strings.Contains(out, `"nodes": 3`) || strings.Count(out, `"message"`) != 2 {
		t.Fatalf("--json: exit %d %q", code, out)
	}
	// The problems of a previous tree that does not load are named as its.
	writeFile(t, dir, "prev.json", []byte(`{"id": "root"}`))
	if code, _, errs := run(dir, "", "next.json", "--prev", "prev.json"); code != exit.Negative || !strings.Contains(errs, "previous tree: ") {
		t.Fatalf("a bad previous tree: exit %d %q", code, errs)
	}
}

// --canonical demands the canonical bytes: the same tree indented
// otherwise is valid without it and a problem with it.
func TestCanonical(t *testing.T) {
	dir := t.TempDir()
	data := bytes.ReplaceAll(tree.Encode(sample()), []byte("\n  "), []byte("\n    "))
	writeFile(t, dir, "t.json", data)
	if code, _, errs := run(dir, "", "t.json"); code != exit.OK {
		t.Fatalf("without --canonical: exit %d %q", code, errs)
	}
	if code, _, errs := run(dir, "", "t.json", "--canonical"); code != exit.Negative || !strings.Contains(errs, "not in canonical form") {
		t.Fatalf("with --canonical: exit %d %q", code, errs)
	}
	if code, _, errs := run(dir, string(tree.Encode(sample())), "-", "--canonical"); code != exit.OK || errs != "" {
		t.Fatalf("canonical on stdin: exit %d %q", code, errs)
	}
}

// The run's own tree (no FILE) is checked with its schema copy: a copy
// that differs from the embedded schema is a problem pointing at
// runner-init; a FILE is checked alone.
func TestDeployedSchemaCopy(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, layout.Tree, tree.Encode(sample()))
	writeFile(t, dir, layout.Schema, schema.Source(schema.TaskTree))
	if code, _, errs := run(dir, ""); code != exit.OK {
		t.Fatalf("the embedded schema's copy: exit %d %q", code, errs)
	}
	writeFile(t, dir, layout.Schema, []byte("{}\n"))
	if code, _, errs := run(dir, ""); code != exit.Negative || !strings.Contains(errs, "differs from the embedded schema; restore it with runner-init") {
		t.Fatalf("a changed copy: exit %d %q", code, errs)
	}
	if code, _, errs := run(dir, "", layout.Tree); code != exit.OK {
		t.Fatalf("the tree as a FILE: exit %d %q", code, errs)
	}
}

// --staged checks the index's tree against HEAD's: nothing staged is
// nothing to check; a passed node's edit staged is refused; a new run's
// bootstrap (another run id staged, no passed node) is judged alone,
// and one with a passed node against HEAD's.
func TestStaged(t *testing.T) {
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	gittest.Run(t, dir, "init", "-q")
	writeFile(t, dir, "README", []byte("x\n"))
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "start")
	if code, out, errs := run(dir, "", "--staged"); code != exit.OK || out != "" || errs != "" {
		t.Fatalf("no tree staged: exit %d %q %q", code, out, errs)
	}
	writeFile(t, dir, layout.Tree, tree.Encode(sample()))
	writeFile(t, dir, layout.RunState, []byte(`{"run_id": "r1"}`+"\n"))
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "run r1")

	edited := sample()
	edited.Children[0].Goal = "another goal"
	writeFile(t, dir, layout.Tree, tree.Encode(edited))
	gittest.Run(t, dir, "add", "-A")
	if code, _, errs := run(dir, "", "--staged"); code != exit.Negative || !strings.Contains(errs, "root/a") {
		t.Fatalf("a passed node's edit staged: exit %d %q", code, errs)
	}

	fresh := sample()
	fresh.Children[0].Passes, fresh.Children[0].Title = false, "New goal's first leaf"
	writeFile(t, dir, layout.Tree, tree.Encode(fresh))
	writeFile(t, dir, layout.RunState, []byte(`{"run_id": "r2"}`+"\n"))
	gittest.Run(t, dir, "add", "-A")
	if code, _, errs := run(dir, "", "--staged"); code != exit.OK {
		t.Fatalf("a new run's tree staged: exit %d %q", code, errs)
	}
	// The same tree under the same run is judged against HEAD's: a's
	// passes taken back by a human is refused.
	writeFile(t, dir, layout.RunState, []byte(`{"run_id": "r1"}`+"\n"))
	gittest.Run(t, dir, "add", "-A")
	if code, _, errs := run(dir, "", "--staged"); code != exit.Negative || !strings.Contains(errs, "root/a") {
		t.Fatalf("the same run's tree with a reopened: exit %d %q", code, errs)
	}
	// A tree with a passed node is judged against HEAD's whatever run id
	// is staged with it: a new run id does not launder a passed node's
	// edit.
	writeFile(t, dir, layout.Tree, tree.Encode(edited))
	writeFile(t, dir, layout.RunState, []byte(`{"run_id": "r3"}`+"\n"))
	gittest.Run(t, dir, "add", "-A")
	if code, _, errs := run(dir, "", "--staged"); code != exit.Negative || !strings.Contains(errs, "root/a") {
		t.Fatalf("a passed node's edit staged under a new run id: exit %d %q", code, errs)
	}
}

// TestRunWithoutFullValidator: run in a program that does not link the
// full validator (step-begin), tree-validate refuses a tree the schema
// refuses by the fast path's first problem and says to run tree-validate
// for all of them; an invariant's problems need no validator and get no
// such line.
func TestRunWithoutFullValidator(t *testing.T) {
	defer schema.SetValidator(schema.SetValidator(nil))
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"id":"root","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":0,"max_attempts":3,"colour":"red","children":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(dir, "", bad)
	if code != exit.Negative || !strings.Contains(stderr, `unknown field "colour"`) || !strings.Contains(stderr, "the first schema problem only: run tree-validate for all of them") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	inv := filepath.Join(dir, "inv.json")
	if err := os.WriteFile(inv, []byte(`{"id":"root","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":4,"max_attempts":3,"children":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(dir, "", inv)
	if code != exit.Negative || strings.Contains(stderr, "first schema problem") {
		t.Fatalf("an invariant's problem: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestSchemaWords: --schema-words prints a document's violations of an
// embedded schema as the full validator words them, [] for none (what
// schema.WordsOrHelper reads); a kind no schema has is a usage error and
// standard input that is not JSON a negative answer, each with nothing
// on stdout.
func TestSchemaWords(t *testing.T) {
	dir := t.TempDir()
	code, out, _ := run(dir, `{"status":"done","summary":"s","children":[],"extra":1}`, "--schema-words", "agent_output.v1")
	var vs []schema.HelperViolation
	if err := json.Unmarshal([]byte(out), &vs); code != exit.OK || err != nil || len(vs) != 1 || vs[0] != (schema.HelperViolation{Pointer: "", Message: "additionalProperties 'extra' not allowed"}) {
		t.Errorf("invalid output: %d %q", code, out)
	}
	code, out, _ = run(dir, `{"status":"done","summary":"s","children":[]}`, "--schema-words", "agent_output.v1")
	if err := json.Unmarshal([]byte(out), &vs); code != exit.OK || err != nil || vs == nil || len(vs) != 0 {
		t.Errorf("valid output: %d %q", code, out)
	}
	if code, out, errs := run(dir, `{}`, "--schema-words", "no_such.v1"); code != exit.Usage || out != "" || !strings.Contains(errs, `no embedded schema "no_such.v1"`) {
		t.Errorf("unknown kind: %d %q %q", code, out, errs)
	}
	if code, out, _ := run(dir, `{"a":`, "--schema-words", "node_tools.v1"); code != exit.Negative || out != "" {
		t.Errorf("not JSON: %d %q", code, out)
	}
	for _, more := range [][]string{{"tree.json"}, {"--json"}, {"--canonical"}, {"--staged"}} {
		if code, out, errs := run(dir, `{}`, append([]string{"--schema-words", "node_tools.v1"}, more...)...); code != exit.Usage || out != "" || !strings.Contains(errs, "takes no other option") {
			t.Errorf("with %v: %d %q %q", more, code, out, errs)
		}
	}
}
