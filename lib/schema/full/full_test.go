package full_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLinkedOnlyWhereWorded: santhosh-tekuri/jsonschema/v5 costs its
// package init at every start of a program that links it, so only the
// commands that validate against a schema or word schema errors link it:
// tree-validate (the tree), tree-update (an agent's tree edits),
// agent-exec (agent output), eval-run and eval-report (eval results and
// summaries, which only the schema judges), the readers that show run
// records (runner-status, runner-ui), and runner-step's Go halves
// (step-begin, step-end), which run tree-validate and tree-update in
// process: a step pays the init twice, as it did when those two were
// processes of their own. runner-record reads only the
// records it wrote (runrecord's check, the schema written out) and
// runner-check reads the agent's output size limit from lib/schema:
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
	want := []string{"agent-exec", "eval-report", "eval-run", "runner-status", "runner-ui", "step-begin", "step-end", "tree-update", "tree-validate"}
	if !slices.Equal(linking, want) {
		t.Errorf("commands linking jsonschema/v5: %v, want %v", linking, want)
	}
	if len(lines) < 10 {
		t.Errorf("only %d commands listed", len(lines))
	}
}
