package agentout_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/agentout"
	"github.com/treeloop/treeloop/lib/tree"
)

// FuzzParse: Parse never panics; an error is one line with no output; an
// accepted output has a status allowed in the mode, children exactly when
// decomposed, and its children always make a tree that loads cleanly.
func FuzzParse(f *testing.F) {
	seeds := []string{
		`{"status":"done","summary":"s","children":[]}`,
		`{"status":"retry","summary":"s","children":[]}`,
		`{"status":"decomposed","summary":"s","children":[` + child + `,` + child2 + `]}`,
		`{"status":"done","summary":"s","children":[` + child + `]}`,
		`{"status":"decomposed","summary":"s","children":[]}`,
		`{"status":"done","summary":"s","children":[],"x":1}`,
		`{"status":"done","status":"done","summary":"s","children":[]}`,
		`{"status":1,"summary":2,"children":"x"}`,
		`{"status":"decomposed","summary":"s","children":[{"title":"","goal":1,"acceptance":[2],"next":"x"}]}`,
		`[]`, ``, "\xEF\xBB\xBF{}", `{"a":[[[[`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, decompose bool) {
		mode := agentout.ModeExecute
		if decompose {
			mode = agentout.ModeDecompose
		}
		out, err := agentout.Parse(data, mode)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			if out.Status != "" || out.Summary != "" || out.Children != nil {
				t.Fatalf("output %+v returned with an error", out)
			}
			return
		}
		if !slices.Contains(agentout.Allowed(mode), out.Status) {
			t.Fatalf("status %q accepted in %s mode", out.Status, mode)
		}
		if out.Summary == "" {
			t.Fatalf("empty summary accepted")
		}
		if (out.Status == tree.AgentDecomposed) != (len(out.Children) > 0) {
			t.Fatalf("status %s with %d children", out.Status, len(out.Children))
		}
		if out.Status != tree.AgentDecomposed {
			return
		}
		root := &tree.Node{ID: "root", Title: "R", Next: tree.NextDecompose, MaxAttempts: 3}
		if err := tree.Transition(root, "root", tree.Outcome{Status: out.Status, Guard: tree.GuardSkipped, Children: out.Children}, 3); err != nil {
			t.Fatalf("Transition: %v", err)
		}
		if _, ps := tree.Load(tree.Encode(root)); len(ps) > 0 {
			t.Fatalf("children of an accepted output make an invalid tree: %v", ps)
		}
	})
}
