package export

import (
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

// The body's open questions are the leaves that wait for an answer (each
// quoted with the command that answers it) and the agent's questions.md;
// the tree says such a leaf waits.
func TestBodyOpenQuestions(t *testing.T) {
	root := &tree.Node{ID: "root", Title: "R", Next: tree.NextDecompose, MaxAttempts: 3, Children: []*tree.Node{
		{ID: "root.1", Order: 1, Title: "Store", Next: tree.NextExecute, MaxAttempts: 3, Waiting: "Postgres or SQLite?"},
		{ID: "root.2", Order: 2, Title: "API", Next: tree.NextExecute, MaxAttempts: 3, Passes: true},
	}}
	b := Body{Plan: Plan{Root: root, Open: []string{"root.1"}}, Questions: "- Which port?"}
	md := b.Markdown()
	want := "\n### Open questions\n\n- Store (`root.1`) waits for an answer (`tree-edit answer root.1 TEXT`):\n\n  > Postgres or SQLite?\n\n- Which port?\n"
	if !strings.HasSuffix(md, want) {
		t.Errorf("open questions: body ends\n%s\nwant\n%s", md[max(0, len(md)-len(want)-40):], want)
	}
	if !strings.Contains(md, "- [ ] Store (`root.1`): waiting (attempts 0/3)\n") {
		t.Errorf("the waiting leaf in the tree:\n%s", md)
	}
	b = Body{Plan: Plan{Root: &tree.Node{ID: "r", Title: "R", Next: tree.NextExecute, MaxAttempts: 3}}}
	if md := b.Markdown(); !strings.HasSuffix(md, "\n### Open questions\n\nNone recorded.\n") {
		t.Errorf("no questions: %s", md)
	}
}
