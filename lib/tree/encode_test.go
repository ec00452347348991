package tree_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

// goldenCanonical is the canonical encoding of goldenTree (DESIGN.md
// decision 9): schema key order, 2-space indent, [] for empty arrays, no HTML
// escaping, children sorted by (order, id), a trailing newline.
const goldenCanonical = `{
  "id": "root",
  "order": 0,
  "title": "Ship <v1> & celebrate",
  "goal": "a \"quoted\" goal\nwith a newline",
  "acceptance": [
    "just ci passes",
    "x < y && y > z"
  ],
  "next": "decompose",
  "passes": false,
  "attempts": 0,
  "max_attempts": 3,
  "children": [
    {
      "id": "b",
      "order": -1,
      "title": "Négatif",
      "goal": "",
      "acceptance": [],
      "next": "execute",
      "passes": true,
      "attempts": 1,
      "max_attempts": 2,
      "children": []
    },
    {
      "id": "a",
      "order": 1,
      "title": "A",
      "goal": "",
      "acceptance": [],
      "next": "execute",
      "passes": false,
      "attempts": 0,
      "max_attempts": 5,
      "children": [
        {
          "id": "a.1",
          "order": 1,
          "title": "A1",
          "goal": "",
          "acceptance": [],
          "next": "execute",
          "passes": false,
          "attempts": 0,
          "max_attempts": 5,
          "children": []
        },
        {
          "id": "a.2",
          "order": 1,
          "title": "A2",
          "goal": "",
          "acceptance": [],
          "next": "execute",
          "passes": false,
          "attempts": 0,
          "max_attempts": 5,
          "children": []
        }
      ]
    },
    {
      "id": "c",
      "order": 10,
      "title": "C",
      "goal": "tab\there",
      "acceptance": [],
      "next": "execute",
      "passes": false,
      "attempts": 0,
      "max_attempts": 3,
      "children": []
    }
  ]
}
`

// goldenTree is stored out of order, with nil slices, to be canonicalized.
func goldenTree() *tree.Node {
	return &tree.Node{
		ID: "root", Title: "Ship <v1> & celebrate", Goal: "a \"quoted\" goal\nwith a newline",
		Acceptance: []string{"just ci passes", "x < y && y > z"}, Next: tree.NextDecompose, MaxAttempts: 3,
		Children: []*tree.Node{
			{ID: "c", Order: 10, Title: "C", Goal: "tab\there", Next: tree.NextExecute, MaxAttempts: 3},
			{ID: "a", Order: 1, Title: "A", Next: tree.NextExecute, MaxAttempts: 5, Children: []*tree.Node{
				{ID: "a.2", Order: 1, Title: "A2", Next: tree.NextExecute, MaxAttempts: 5},
				{ID: "a.1", Order: 1, Title: "A1", Next: tree.NextExecute, MaxAttempts: 5},
			}},
			{ID: "b", Order: -1, Title: "Négatif", Next: tree.NextExecute, Passes: true, Attempts: 1, MaxAttempts: 2},
		},
	}
}

func TestEncodeGolden(t *testing.T) {
	root := goldenTree()
	got := tree.Encode(root)
	if string(got) != goldenCanonical {
		t.Fatalf("Encode =\n%s\nwant\n%s", got, goldenCanonical)
	}
	// Encode sorts and normalizes in place.
	var ids []string
	for _, c := range root.Children {
		ids = append(ids, c.ID)
	}
	if strings.Join(ids, ",") != "b,a,c" {
		t.Errorf("children after Encode = %v, want b,a,c", ids)
	}
	if root.Children[0].Acceptance == nil || root.Children[0].Children == nil {
		t.Errorf("Encode did not normalize nil slices in place")
	}
	// The golden bytes are a valid tree that is canonical for itself.
	back := mustLoad(t, []byte(goldenCanonical))
	if !tree.IsCanonical([]byte(goldenCanonical), back) {
		t.Errorf("IsCanonical(golden) = false")
	}
	if !tree.Equal(back, root) {
		t.Errorf("Load(golden) differs from the encoded tree")
	}
}

func TestEncodeDetails(t *testing.T) {
	leaf := &tree.Node{ID: "x", Title: "<>&\u2028", Next: tree.NextExecute, MaxAttempts: 1}
	got := string(tree.Encode(leaf))
	want := "{\n" +
		`  "id": "x",` + "\n" +
		`  "order": 0,` + "\n" +
		`  "title": "<>&\u2028",` + "\n" + // U+2028 is escaped by encoding/json; <>& are not
		`  "goal": "",` + "\n" +
		`  "acceptance": [],` + "\n" +
		`  "next": "execute",` + "\n" +
		`  "passes": false,` + "\n" +
		`  "attempts": 0,` + "\n" +
		`  "max_attempts": 1,` + "\n" +
		`  "children": []` + "\n" +
		"}\n"
	if got != want {
		t.Errorf("Encode =\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, `\u003c`) || strings.Contains(got, `\u0026`) {
		t.Errorf("Encode escaped HTML characters: %s", got)
	}
	if !strings.HasSuffix(got, "}\n") || strings.HasSuffix(got, "\n\n") {
		t.Errorf("Encode must end with exactly one newline: %q", got[len(got)-3:])
	}
}

// TestEncodeIdempotent: Encode(Load(x)) is a fixed point for every valid
// fixture, whatever its formatting.
func TestEncodeIdempotent(t *testing.T) {
	inputs := map[string][]byte{
		"golden":           []byte(goldenCanonical),
		"nested":           readTestdata(t, "load/valid_nested.json"),
		"bounds":           readTestdata(t, "load/valid_max_bounds.json"),
		"id_128":           readTestdata(t, "load/valid_id_128.json"),
		"minified":         []byte(`{"id":"r","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":0,"max_attempts":1,"children":[]}`),
		"reordered keys":   []byte(`{"children":[],"id":"r","title":"T","order":0,"goal":"","next":"execute","acceptance":["<&>"],"passes":false,"max_attempts":1,"attempts":0}`),
		"escaped unicode":  []byte(`{"id":"r","order":0,"title":"\u00e9\u2029\ud83d\ude00","goal":"\/","acceptance":[],"next":"execute","passes":false,"attempts":0,"max_attempts":1,"children":[]}`),
		"integral floats":  []byte(`{"id":"r","order":-0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":1.0,"max_attempts":2E0,"children":[]}`),
		"crlf and tabs":    []byte("{\r\n\t\"id\":\"r\",\"order\":0,\"title\":\"T\",\"goal\":\"\",\"acceptance\":[],\"next\":\"execute\",\r\n\"passes\":false,\"attempts\":0,\"max_attempts\":1,\"children\":[]}\r\n"),
		"parse-only valid": readTestdata(t, "load/unsorted_by_order.json"), // invariants fail, schema passes
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			root, ps := tree.Parse(data)
			if ps != nil {
				t.Fatalf("Parse: %v", ps)
			}
			once := tree.Encode(root)
			again, ps := tree.Load(once)
			if len(ps) > 0 && name != "parse-only valid" {
				t.Fatalf("Load(Encode): %v", ps)
			}
			if name == "parse-only valid" {
				// Encode sorted the children, so the encoding is now valid.
				again = mustLoad(t, once)
			}
			twice := tree.Encode(again)
			if !bytes.Equal(once, twice) {
				t.Errorf("Encode not idempotent:\n%s\nthen\n%s", once, twice)
			}
			if !tree.IsCanonical(once, again) {
				t.Errorf("IsCanonical(Encode(t), t) = false")
			}
		})
	}
}

func TestIsCanonical(t *testing.T) {
	canonical := []byte(goldenCanonical)
	tests := []struct {
		name string
		data []byte
		want bool
	}{
		{"canonical", canonical, true},
		{"no trailing newline", bytes.TrimSuffix(canonical, []byte("\n")), false},
		{"two trailing newlines", append(bytes.Clone(canonical), '\n'), false},
		{"crlf", bytes.ReplaceAll(canonical, []byte("\n"), []byte("\r\n")), false},
		{"tab indent", bytes.ReplaceAll(canonical, []byte("  "), []byte("\t")), false},
		{"html escaped", bytes.Replace(canonical, []byte("<v1>"), []byte(`\u003cv1\u003e`), 1), false},
		{"children unsorted", swapChildren(t, canonical), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, ps := tree.Parse(tt.data)
			if ps != nil {
				t.Fatalf("Parse: %v", ps)
			}
			before := tree.Encode(root.Clone())
			stored := root.Clone()
			if got := tree.IsCanonical(tt.data, root); got != tt.want {
				t.Errorf("IsCanonical = %v, want %v", got, tt.want)
			}
			if !tree.Equal(root, stored) {
				t.Errorf("IsCanonical modified the tree")
			}
			if !bytes.Equal(before, tree.Encode(root)) {
				t.Errorf("IsCanonical changed the encoding")
			}
		})
	}
}

// swapChildren returns the golden bytes with root's children b and c
// stored in the other order (still valid JSON, not canonical).
func swapChildren(t *testing.T, canonical []byte) []byte {
	t.Helper()
	root := mustLoad(t, canonical)
	k := root.Children
	k[0], k[2] = k[2], k[0]
	var buf bytes.Buffer
	// Encode would sort again, so splice by hand: encode each child alone.
	buf.WriteString(`{"id":"root","order":0,"title":"Ship <v1> & celebrate","goal":"a \"quoted\" goal\nwith a newline","acceptance":["just ci passes","x < y && y > z"],"next":"decompose","passes":false,"attempts":0,"max_attempts":3,"children":[`)
	for i, c := range k {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(bytes.TrimSuffix(tree.Encode(c), []byte("\n")))
	}
	buf.WriteString("]}\n")
	return buf.Bytes()
}

func TestSortAndLess(t *testing.T) {
	root := nd("r", 0, nd("b", 1), nd("a", 2), nd("c", -5, nd("z", 0), nd("y", 0)), nd("a", 1), nd("B", 1))
	tree.Sort(root)
	var got []string
	for _, c := range root.Children {
		got = append(got, c.ID)
	}
	if strings.Join(got, ",") != "c,B,a,b,a" {
		t.Errorf("Sort order = %v, want c,B,a,b,a", got)
	}
	if c := root.Children[0]; c.Children[0].ID != "y" {
		t.Errorf("Sort did not recurse: %s first", c.Children[0].ID)
	}
	less := []struct {
		a, b *tree.Node
		want bool
	}{
		{nd("b", 1), nd("a", 2), true},
		{nd("a", 2), nd("b", 1), false},
		{nd("a", 1), nd("b", 1), true},
		{nd("a", 1), nd("a", 1), false},
		{nd("a.10", 1), nd("a.2", 1), true}, // byte order, not numeric
		{nd("x", 9), nd("x", 10), true},     // numeric order, not text
		{nd("Z", 1), nd("a", 1), true},
	}
	for _, tt := range less {
		if got := tree.Less(tt.a, tt.b); got != tt.want {
			t.Errorf("Less(%s/%d, %s/%d) = %v, want %v", tt.a.ID, tt.a.Order, tt.b.ID, tt.b.Order, got, tt.want)
		}
	}
}

func TestCloneEqualIndexFind(t *testing.T) {
	root := nd("root", 0, nd("a", 1, nd("a1", 1)), nd("b", 2))
	root.Acceptance = []string{"x"}
	c := root.Clone()
	if !tree.Equal(root, c) {
		t.Fatalf("Clone not Equal")
	}
	c.Children[0].Children[0].Title = "changed"
	c.Acceptance[0] = "y"
	if root.Children[0].Children[0].Title != "Task a1" || root.Acceptance[0] != "x" {
		t.Errorf("Clone is shallow")
	}
	if tree.Equal(root, c) {
		t.Errorf("Equal ignores differences")
	}
	if (*tree.Node)(nil).Clone() != nil || !tree.Equal(nil, nil) || tree.Equal(root, nil) {
		t.Errorf("nil handling of Clone/Equal")
	}
	fields := []func(*tree.Node){
		func(n *tree.Node) { n.ID = "z" },
		func(n *tree.Node) { n.Order = 9 },
		func(n *tree.Node) { n.Title = "z" },
		func(n *tree.Node) { n.Goal = "z" },
		func(n *tree.Node) { n.Acceptance = []string{"x", "y"} },
		func(n *tree.Node) { n.Next = tree.NextDecompose },
		func(n *tree.Node) { n.Passes = true },
		func(n *tree.Node) { n.Attempts = 1 },
		func(n *tree.Node) { n.MaxAttempts = 9 },
		func(n *tree.Node) { n.SentBack = true },
		func(n *tree.Node) { n.Children = n.Children[:1] },
	}
	for i, f := range fields {
		x := root.Clone()
		f(x)
		if tree.Equal(root, x) {
			t.Errorf("Equal misses change %d", i)
		}
	}

	idx := tree.Index(root)
	if len(idx) != 4 {
		t.Errorf("Index has %d entries, want 4", len(idx))
	}
	e := idx["a1"]
	if e.Path != "root/a/a1" || e.Parent != root.Children[0] || e.Node != root.Children[0].Children[0] {
		t.Errorf("Index[a1] = %+v", e)
	}
	if e := idx["root"]; e.Parent != nil || e.Path != "root" {
		t.Errorf("Index[root] = %+v", e)
	}
	if len(tree.Index(nil)) != 0 {
		t.Errorf("Index(nil) not empty")
	}
	n, path := tree.Find(root, "a1")
	if n != root.Children[0].Children[0] || path != "root/a/a1" {
		t.Errorf("Find(a1) = %v, %q", n, path)
	}
	if n, path := tree.Find(root, "nope"); n != nil || path != "" {
		t.Errorf("Find(nope) = %v, %q", n, path)
	}
	if n, _ := tree.Find(nil, "a"); n != nil {
		t.Errorf("Find(nil) = %v", n)
	}
	if tree.Count(root) != 4 || tree.Count(nil) != 0 {
		t.Errorf("Count = %d", tree.Count(root))
	}
	if root.IsLeaf() || !root.Children[1].IsLeaf() {
		t.Errorf("IsLeaf wrong")
	}
}
