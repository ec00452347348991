package answer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
	_ "github.com/treeloop/treeloop/lib/schema/full"
	"github.com/treeloop/treeloop/lib/tree"
)

// Parse takes exactly what schemas/queued_answer.v1.schema.json takes
// (the time aside: the schema does not assert formats, Parse does).
func TestParseAgreesWithSchema(t *testing.T) {
	ok := `{"version": 1, "node_id": "root.1", "question": "Which?", "answer": "That one.", "by": "operator", "at": "2026-01-02T03:04:05Z"}`
	docs := []string{
		ok,
		`{"version": 2, "node_id": "root.1", "question": "Which?", "answer": "That one.", "by": "operator", "at": "2026-01-02T03:04:05Z"}`,
		`{"version": 1, "node_id": "root/1", "question": "Which?", "answer": "That one.", "by": "operator", "at": "2026-01-02T03:04:05Z"}`,
		`{"version": 1, "node_id": "root.1", "question": "", "answer": "That one.", "by": "operator", "at": "2026-01-02T03:04:05Z"}`,
		`{"version": 1, "node_id": "root.1", "question": "Which?", "answer": "", "by": "operator", "at": "2026-01-02T03:04:05Z"}`,
		`{"version": 1, "node_id": "root.1", "question": "Which?", "answer": "That one.", "by": "", "at": "2026-01-02T03:04:05Z"}`,
		`{"version": 1, "node_id": "root.1", "question": "Which?", "answer": "That one.", "by": "operator"}`,
		`{"version": 1, "node_id": "root.1", "question": "Which?", "answer": "That one.", "by": "operator", "at": "2026-01-02T03:04:05Z", "x": 1}`,
		`{"version": 1, "node_id": "root.1", "question": "Which?", "answer": 5, "by": "operator", "at": "2026-01-02T03:04:05Z"}`,
		`{"version": 1, "node_id": "root.1", "question": "Which?", "answer": "` + strings.Repeat("é", MaxRunes+1) + `", "by": "operator", "at": "2026-01-02T03:04:05Z"}`,
		`[]`,
	}
	for _, d := range docs {
		_, err := Parse([]byte(d))
		v, derr := jsonstrict.Decode([]byte(d))
		valid := derr == nil && len(full.Validate(schema.QueuedAnswer, v)) == 0
		if (err == nil) != valid {
			t.Errorf("Parse(%.80s) = %v, schema valid %v", d, err, valid)
		}
	}
	if _, err := Parse([]byte(strings.Replace(ok, "2026-01-02T03:04:05Z", "yesterday", 1))); err == nil {
		t.Error("Parse took a time that is not RFC 3339")
	}
}

func TestText(t *testing.T) {
	if s, err := Text("  Use SQLite.\n"); err != nil || s != "Use SQLite." {
		t.Errorf("Text = %q, %v", s, err)
	}
	for _, bad := range []string{"", " \n\t", "\xff", strings.Repeat("a", MaxRunes+1)} {
		if _, err := Text(bad); err == nil {
			t.Errorf("Text(%.20q) accepted", bad)
		}
	}
	if _, err := Text(strings.Repeat("é", MaxRunes)); err != nil {
		t.Errorf("Text refused %d code points: %v", MaxRunes, err)
	}
}

// The open questions, in selection order, and their Markdown for a
// pull-request body.
func TestQuestionsMarkdown(t *testing.T) {
	root := &tree.Node{ID: "root", Title: "R", Next: tree.NextExecute, MaxAttempts: 3, Children: []*tree.Node{
		{ID: "b", Order: 2, Title: "Store", Next: tree.NextExecute, MaxAttempts: 3, Waiting: "Postgres or SQLite?\nWhich version?"},
		{ID: "a", Order: 1, Title: "API", Next: tree.NextExecute, MaxAttempts: 3, Waiting: "REST or gRPC?"},
		{ID: "c", Order: 3, Title: "Done", Next: tree.NextExecute, MaxAttempts: 3, Passes: true},
	}}
	qs := Questions(root)
	if len(qs) != 2 || qs[0].ID != "a" || qs[1].Path != "root/b" {
		t.Fatalf("Questions = %+v", qs)
	}
	want := "- API (`a`) waits for an answer (`tree-edit answer a TEXT`):\n\n  > REST or gRPC?\n" +
		"- Store (`b`) waits for an answer (`tree-edit answer b TEXT`):\n\n  > Postgres or SQLite?\n  > Which version?\n"
	if got := Markdown(qs); got != want {
		t.Errorf("Markdown =\n%s\nwant\n%s", got, want)
	}
	if Markdown(Questions(&tree.Node{ID: "r"})) != "" || len(Questions(nil)) != 0 {
		t.Error("questions in a tree without any")
	}
}

// A queued answer is written where Pending finds it, and read back equal;
// a queue git does not ignore is refused.
func TestQueuePending(t *testing.T) {
	root := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	run("init", "-q")
	q := Queued{NodeID: "root.1", Question: "Which?", Answer: "That one.", By: "operator"}
	if _, err := Queue(root, q, time.Now()); err == nil || !strings.Contains(err.Error(), "not ignored by git") {
		t.Fatalf("Queue without the ignore rule: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, layout.Runner), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, layout.Gitignore), []byte("answers/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	rel, err := Queue(root, q, t0)
	if err != nil {
		t.Fatal(err)
	}
	if rel != layout.Answers+"/20260102T030405.000000006Z-root.1.json" {
		t.Errorf("queued as %s", rel)
	}
	if _, err := Queue(root, Queued{NodeID: "root.2", Question: "Q?", Answer: "A.", By: "ui"}, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, layout.Answers, "junk"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, layout.Answers, ".x.tmp-1"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, bad := Pending(root)
	if len(qs) != 2 || qs[0].NodeID != "root.1" || qs[0].Answer != "That one." || qs[0].At != "2026-01-02T03:04:05Z" || qs[1].NodeID != "root.2" {
		t.Errorf("Pending = %+v", qs)
	}
	if len(bad) != 1 || bad[0].File != "junk" {
		t.Errorf("bad = %+v (a file being written is not bad)", bad)
	}
	if err := Remove(root, qs[0]); err != nil {
		t.Fatal(err)
	}
	if qs, _ := Pending(root); len(qs) != 1 {
		t.Errorf("after Remove: %+v", qs)
	}
}
