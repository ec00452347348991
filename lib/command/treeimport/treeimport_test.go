package treeimport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(append([]string{"-C", t.TempDir()}, args...), strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const checklist = "# Ship\n\n- [ ] API\n  - [x] Routes\n  - handles errors\n- [ ]\n"

// The default output is the canonical tree; a rejected line is a warning
// with its number, and with --strict exit 1.
func TestTreeOnStdout(t *testing.T) {
	code, out, errs := run(t, checklist)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	root, ps := tree.Load([]byte(out))
	if len(ps) > 0 || !tree.IsCanonical([]byte(out), root) {
		t.Fatalf("not a canonical tree: %v\n%s", ps, out)
	}
	if root.Title != "Ship" || len(root.Children) != 1 || root.Children[0].Acceptance[0] != "handles errors" {
		t.Errorf("tree:\n%s", out)
	}
	if !strings.Contains(errs, "tree-import: warning: <stdin>: line 6: rejected: empty list item: - [ ]") ||
		!strings.Contains(errs, "1 checked item of the plan is an open node") {
		t.Errorf("stderr: %s", errs)
	}
	if code, _, errs := run(t, checklist, "--strict"); code != 1 || !strings.Contains(errs, "1 line(s) of <stdin> rejected (--strict)") {
		t.Errorf("--strict: exit %d, %s", code, errs)
	}
}

// --json carries the tree, the assumptions and the rejected lines;
// --dry-run an outline; --max-attempts and --root-id shape the nodes.
func TestJSONAndDryRun(t *testing.T) {
	code, out, _ := run(t, checklist, "--json", "--root-id", "ship", "--max-attempts", "5")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var res Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Format != "markdown" || res.Tree.ID != "ship" || res.Tree.Children[0].ID != "ship.1" || res.Tree.Children[0].Children[0].MaxAttempts != 5 {
		t.Errorf("result %+v", res)
	}
	if len(res.Assumptions) != 1 || res.Assumptions[0].Line != 4 || len(res.Rejected) != 1 || res.Rejected[0].Line != 6 {
		t.Errorf("notes %+v %+v", res.Assumptions, res.Rejected)
	}
	code, out, _ = run(t, checklist, "--dry-run")
	want := "root  decompose  Ship\n  root.1  decompose  API\n      acceptance: handles errors\n    root.1.1  execute  Routes\n" +
		"assumption: line 4: Routes (checked in the plan: not passed, the guard decides)\nrejected: line 6: empty list item: - [ ]\n"
	if code != 0 || out != want {
		t.Errorf("--dry-run:\n%s\nwant\n%s", out, want)
	}
}

// A plan with nothing in it, or a file that cannot be read, is a one-line
// refusal.
func TestRefusals(t *testing.T) {
	if code, _, errs := run(t, "\n\n"); code != 1 || !strings.HasPrefix(errs, "tree-import: <stdin>: the plan holds no work") {
		t.Errorf("empty plan: %d %s", code, errs)
	}
	if code, _, errs := run(t, "", "no-such.md"); code != 1 || !strings.HasPrefix(errs, "tree-import: read no-such.md: ") {
		t.Errorf("missing file: %d %s", code, errs)
	}
	if code, _, _ := run(t, "x", "--format", "yaml"); code != 80 {
		t.Errorf("unknown format: exit %d", code)
	}
}
