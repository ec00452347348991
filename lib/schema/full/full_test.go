package full_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinkedOnlyWhereWorded: santhosh-tekuri/jsonschema/v5 costs its
// package init at every start of a program that links it, so only the
// commands that validate against a schema or word schema errors off the
// step link it: tree-validate (the tree; it is also the helper that words
// the step's refusals, schema.WordsOrHelper), tree-update (an agent's
// tree edits), eval-run and eval-report (eval results and summaries,
// which only the schema judges), and the readers that show run records
// (runner-status, runner-ui). No command of the step links it: agent-exec
// and step-end judge an agent's output and a node's tools.json by plain
// checks generated from their schemas and word a refusal through the
// helper; step-begin runs tree-validate, and tree-update to recover an
// iteration, in process without it: a tree or an output they refuse is
// judged by the fast paths, which agree with the schema, and worded by
// its first problem (tree-validate words them all). runner-record reads
// only the records it wrote (runrecord's check, the schema written out)
// and runner-check reads the agent's output size limit from lib/schema:
// neither links it. A program that validates links it by construction
// (Validate is here, not in lib/schema).
// A command added to the step, or an import that drags the validator into
// one that reads only what the runner wrote, fails here.
func TestLinkedOnlyWhereWorded(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "../../../cmd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var linking []string
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, line := range lines {
		f := strings.Fields(line)
		if slices.Contains(f[1:], "github.com/santhosh-tekuri/jsonschema/v5") {
			linking = append(linking, f[0][strings.LastIndex(f[0], "/")+1:])
		}
	}
	want := []string{"eval-report", "eval-run", "runner-status", "runner-ui", "tree-update", "tree-validate"}
	if !slices.Equal(linking, want) {
		t.Errorf("commands linking jsonschema/v5: %v, want %v", linking, want)
	}
	if len(lines) < 10 {
		t.Errorf("only %d commands listed", len(lines))
	}
}
