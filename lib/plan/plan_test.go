package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

var update = flag.Bool("update", false, "rewrite the golden outlines in testdata")

// Every fixture (one per format) gives its golden outline: the tree, the
// assumptions and the rejected lines. go test -update rewrites them.
func TestFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*"))
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, root, err := Import(data, FormatAuto, "Plan", "root", 3)
			if err != nil {
				t.Fatal(err)
			}
			got := p.Format + "\n" + p.Outline(root)
			golden := f + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("outline of %s:\n%s\nwant\n%s", f, got, want)
			}
			// Deterministic: the same bytes, the same tree.
			_, again, _ := Import(data, FormatAuto, "Plan", "root", 3)
			if !bytes.Equal(tree.Encode(root), tree.Encode(again)) {
				t.Error("two imports differ")
			}
		})
	}
	if n < 6 {
		t.Errorf("%d fixtures, want one per format and Markdown kind (6)", n)
	}
}

// shape is a tree's shape: each node's depth and title, in order.
func shape(n *tree.Node, depth int, out *[]string) {
	*out = append(*out, strings.Repeat(" ", depth)+n.Title)
	for _, c := range n.Children {
		shape(c, depth+1, out)
	}
}

// A nested checklist gives a tree of the same shape: the one top item is
// the root, nested items are children in order, checked ones included.
func TestChecklistShape(t *testing.T) {
	doc := "- [ ] Ship 1.0\n  - [ ] API\n    - [x] Routes\n    - [ ] Auth\n      - [ ] Tokens\n  - [ ] Docs\n"
	p, root, err := Import([]byte(doc), FormatMarkdown, "Plan", "root", 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	shape(root, 0, &got)
	want := []string{"Ship 1.0", " API", "  Routes", "  Auth", "   Tokens", " Docs"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shape:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ids := []string{root.ID, root.Children[0].ID, root.Children[0].Children[1].Children[0].ID}
	if strings.Join(ids, " ") != "root root.1 root.1.2.1" {
		t.Errorf("ids %v", ids)
	}
	if root.Next != tree.NextDecompose || root.Children[1].Next != tree.NextExecute {
		t.Errorf("next: root %s, leaf %s", root.Next, root.Children[1].Next)
	}
	if len(p.Assumptions) != 1 || p.Assumptions[0].Line != 3 || p.Assumptions[0].Text != "Routes" {
		t.Errorf("assumptions %+v", p.Assumptions)
	}
	if n, _ := tree.Find(root, "root.1.1"); n.Passes {
		t.Error("a checked item passed")
	}
}

// Text beyond the schema's bounds is cut or left out, each reported with
// its line; the tree stays valid.
func TestBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("# " + strings.Repeat("t", 300) + "\n\n" + strings.Repeat("word ", 4000) + "\n\n- [ ] Item\n")
	for i := 0; i < 70; i++ {
		b.WriteString("  - criterion\n")
	}
	b.WriteString("- [ ] \n<!-- a note -->\n")
	p, root, err := Import([]byte(b.String()), FormatMarkdown, "Plan", "root", 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, ps := tree.Load(tree.Encode(root)); len(ps) > 0 {
		t.Fatal(ps)
	}
	if len([]rune(root.Title)) != 256 || !strings.HasSuffix(root.Title, "…") || !strings.HasPrefix(root.Goal, strings.Repeat("t", 300)) {
		t.Errorf("a long title is cut and kept whole in the goal: %d runes", len([]rune(root.Title)))
	}
	if n := len(root.Children[0].Acceptance); n != 64 {
		t.Errorf("%d criteria kept, want 64", n)
	}
	reasons := map[string]int{}
	for _, r := range p.Rejected {
		reasons[r.Reason]++
	}
	for reason, want := range map[string]int{
		"the text is cut to the 16384 characters a goal holds": 1,
		`more than 64 acceptance criteria on "Item"`:           6,
		"empty list item": 1,
		"HTML comment":    1,
	} {
		if reasons[reason] != want {
			t.Errorf("%d rejections %q, want %d (all: %v)", reasons[reason], reason, want, p.Rejected)
		}
	}
	for i := 1; i < len(p.Rejected); i++ {
		if p.Rejected[i].Line < p.Rejected[i-1].Line {
			t.Errorf("rejections out of line order: %v", p.Rejected)
		}
	}
}

// What cannot be read is an error, not an empty tree.
func TestErrors(t *testing.T) {
	for doc, format := range map[string]string{
		"":                         FormatAuto,
		"\n\n  \n":                 FormatMarkdown,
		`{"userStories": 3}`:       FormatPRDJSON,
		`{"title": "", "body": 1}`: FormatGitHubIssue,
		`{"body": "x"`:             FormatGitHubIssue,
		"\xff\xfe":                 FormatMarkdown,
		"# x":                      "yaml",
	} {
		if _, _, err := Import([]byte(doc), format, "Plan", "root", 3); err == nil {
			t.Errorf("Import(%q, %s) took it", doc, format)
		}
	}
	if _, _, err := Import([]byte("# x"), FormatMarkdown, "Plan", "bad/id", 3); err == nil {
		t.Error("a bad root id was taken")
	}
}

// A heading alone is a leaf root; an outline's big prose section is
// decomposed, a small one executed.
func TestNext(t *testing.T) {
	_, root, err := Import([]byte("# Do it\n"), FormatMarkdown, "Plan", "root", 3)
	if err != nil || len(root.Children) != 0 || root.Next != tree.NextExecute {
		t.Fatalf("heading alone: %+v %v", root, err)
	}
	doc := "# R\n\n## Big\n\n" + strings.Repeat("word ", 200) + "\n\n## Small\n\nA line.\n"
	_, root, err = Import([]byte(doc), FormatMarkdown, "Plan", "root", 3)
	if err != nil {
		t.Fatal(err)
	}
	if root.Children[0].Next != tree.NextDecompose || root.Children[1].Next != tree.NextExecute {
		t.Errorf("next: big %s, small %s", root.Children[0].Next, root.Children[1].Next)
	}
}

// TestEvidenceMark: a title ending in an evidence mark sets the node's
// evidence (the operator's choice) and loses the mark; a mark alone, or in
// the middle of a title, is text.
func TestEvidenceMark(t *testing.T) {
	p, err := Parse([]byte("# Goal\n\n- [ ] Write the docs (evidence: suite)\n- [ ] Add the flag [evidence: witness]\n- [ ] Keep (evidence: suite) in the middle\n- [ ] (evidence: suite)\n"), FormatMarkdown, "")
	if err != nil {
		t.Fatal(err)
	}
	root, err := p.Tree("root", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ title, evidence string }{
		{"Write the docs", "suite"},
		{"Add the flag", "witness"},
		{"Keep (evidence: suite) in the middle", ""},
		{"(evidence: suite)", ""},
	}
	if len(root.Children) != len(want) {
		t.Fatalf("%d children, want %d", len(root.Children), len(want))
	}
	for i, w := range want {
		if c := root.Children[i]; c.Title != w.title || c.Evidence != w.evidence {
			t.Errorf("child %d: %q evidence %q, want %q evidence %q", i, c.Title, c.Evidence, w.title, w.evidence)
		}
	}
}
