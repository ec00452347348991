package tree_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

const idPatternMsg = "id: does not match pattern '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'"

// loadCases maps every fixture in testdata/load to the exact problems Load
// reports for it, in order (seed 002 §1 and §2, one fixture per error row).
// A nil list means the fixture is a valid tree.
var loadCases = map[string]tree.Problems{
	// Valid trees.
	"valid_single_leaf":     nil,
	"valid_nested":          nil,
	"valid_id_128":          nil, // a 128-character id is the longest allowed
	"valid_max_bounds":      nil, // order ±(2^53-1), attempts = max_attempts = 1000000
	"valid_waiting_answers": nil, // a waiting leaf with an earlier answer, an answered leaf
	"valid_sent_back":       nil, // a leaf sent back to decompose, and one that then decomposed

	// JSON layer: no path, one problem.
	"json_empty":                {p(tree.LayerJSON, "", "empty document")},
	"json_bom":                  {p(tree.LayerJSON, "", "line 1 column 1: starts with a UTF-8 byte order mark; save the file without it")},
	"json_duplicate_key":        {p(tree.LayerJSON, "", `line 6 column 3: duplicate key "goal"`)},
	"json_duplicate_key_nested": {p(tree.LayerJSON, "", `line 27 column 11: duplicate key "title"`)},
	"json_trailing_data":        {p(tree.LayerJSON, "", "line 13 column 1: invalid character '{' after top-level value")},

	// Schema layer: required fields.
	"missing_field_root":   {p(tree.LayerSchema, "root", "missing properties: 'goal'")},
	"missing_fields_child": {p(tree.LayerSchema, "root/a", "missing properties: 'next', 'children'")},

	// Schema layer: the type of each field.
	"wrong_type_id":              {p(tree.LayerSchema, "root/children[0]", "id: expected string, but got number")},
	"wrong_type_order":           {p(tree.LayerSchema, "root/a", "order: expected integer, but got string")},
	"wrong_type_order_fraction":  {p(tree.LayerSchema, "root/a", "order: expected integer, but got number")},
	"wrong_type_title":           {p(tree.LayerSchema, "root/a", "title: expected string, but got number")},
	"wrong_type_goal":            {p(tree.LayerSchema, "root/a", "goal: expected string, but got null")},
	"wrong_type_acceptance":      {p(tree.LayerSchema, "root/a", "acceptance: expected array, but got string")},
	"wrong_type_acceptance_item": {p(tree.LayerSchema, "root/a", "acceptance/1: expected string, but got number")},
	"wrong_type_next":            {p(tree.LayerSchema, "root/a", `next: value must be one of "execute", "decompose"`)},
	"wrong_type_passes":          {p(tree.LayerSchema, "root/a", "passes: expected boolean, but got string")},
	"wrong_type_sent_back":       {p(tree.LayerSchema, "root/a", "sent_back: expected boolean, but got string")},
	"wrong_type_attempts":        {p(tree.LayerSchema, "root/a", "attempts: expected integer, but got string")},
	"wrong_type_max_attempts":    {p(tree.LayerSchema, "root/a", "max_attempts: expected integer, but got number")},
	"wrong_type_children":        {p(tree.LayerSchema, "root/a", "children: expected array, but got object")},
	"wrong_type_child":           {p(tree.LayerSchema, "root/children[0]", "expected object, but got number")},
	"not_an_object":              {p(tree.LayerSchema, "", "expected object, but got array")},

	// Schema layer: extra properties, bounds, enum, title.
	"extra_property":        {p(tree.LayerSchema, "root/a", "additionalProperties 'extra' not allowed")},
	"negative_attempts":     {p(tree.LayerSchema, "root/a", "attempts: must be >= 0 but found -1")},
	"negative_max_attempts": {p(tree.LayerSchema, "root/a", "max_attempts: must be >= 0 but found -1")},
	"attempts_over_schema_maximum": {
		p(tree.LayerSchema, "root/a", "attempts: must be <= 1e+06 but found 1.000001e+06"),
		p(tree.LayerSchema, "root/a", "max_attempts: must be <= 1e+06 but found 1.000001e+06"),
	},
	"empty_title":      {p(tree.LayerSchema, "root/a", "title: length must be >= 1, but got 0")},
	"next_not_in_enum": {p(tree.LayerSchema, "root/a", `next: value must be one of "execute", "decompose"`)},

	// Schema layer: ids (DESIGN.md decision 8), shown as children[i].
	"id_slash":        {p(tree.LayerSchema, "root/children[0]", idPatternMsg)},
	"id_dotdot":       {p(tree.LayerSchema, "root/children[0]", idPatternMsg)},
	"id_space":        {p(tree.LayerSchema, "root/children[0]", idPatternMsg)},
	"id_empty":        {p(tree.LayerSchema, "root/children[0]", idPatternMsg)},
	"id_129":          {p(tree.LayerSchema, "root/children[0]", idPatternMsg)},
	"id_leading_dash": {p(tree.LayerSchema, "root/children[0]", idPatternMsg)},
	"id_root_invalid": {
		p(tree.LayerSchema, "root", idPatternMsg),
		p(tree.LayerSchema, "root/a", "attempts: must be >= 0 but found -1"),
	},

	// Schema layer: error paths.
	"error_deep": {p(tree.LayerSchema, "root/a/b/c", "max_attempts: expected integer, but got string")},
	"error_under_invalid_id": {
		p(tree.LayerSchema, "root/children[0]", idPatternMsg),
		p(tree.LayerSchema, "root/children[0]/b", "attempts: must be >= 0 but found -1"),
	},
	"three_schema_errors": {
		p(tree.LayerSchema, "root/a", "attempts: must be >= 0 but found -1"),
		p(tree.LayerSchema, "root/b", "title: length must be >= 1, but got 0"),
		p(tree.LayerSchema, "root/c", "additionalProperties 'extra' not allowed"),
	},

	// Invariant layer (seed 002 §2).
	"max_attempts_zero": {p(tree.LayerInvariant, "root/a", "max_attempts must be > 0")},
	"max_attempts_zero_attempts_one": {
		p(tree.LayerInvariant, "root/a", "attempts 1 exceeds max_attempts 0"),
		p(tree.LayerInvariant, "root/a", "max_attempts must be > 0"),
	},
	"attempts_exceed_max":   {p(tree.LayerInvariant, "root/a", "attempts 4 exceeds max_attempts 3")},
	"duplicate_ids":         {p(tree.LayerInvariant, "root/b/x", "duplicate id 'x' (first at root/a/x)")},
	"duplicate_root_id":     {p(tree.LayerInvariant, "root/root", "duplicate id 'root' (first at root)")},
	"duplicate_sibling_ids": {p(tree.LayerInvariant, "root/a", "duplicate id 'a' (two siblings)")},
	// Equal (order, id) siblings are not strictly sorted either.
	"duplicate_sibling_same_order": {
		p(tree.LayerInvariant, "root", "children must be sorted by (order,id)"),
		p(tree.LayerInvariant, "root/a", "duplicate id 'a' (two siblings)"),
	},
	"unsorted_by_order":      {p(tree.LayerInvariant, "root", "children must be sorted by (order,id)")},
	"unsorted_by_id":         {p(tree.LayerInvariant, "root", "children must be sorted by (order,id)")},
	"unsorted_nested":        {p(tree.LayerInvariant, "root/a", "children must be sorted by (order,id)")},
	"passed_with_open_child": {p(tree.LayerInvariant, "root/a", "passes=true but child 'a2' is open")},
	"waiting_on_passed":      {p(tree.LayerInvariant, "root/a", "only an open leaf waits for an answer (waiting set on a passed node or a node with children)")},
	"waiting_on_parent":      {p(tree.LayerInvariant, "root/a", "only an open leaf waits for an answer (waiting set on a passed node or a node with children)")},
	"waiting_empty":          {p(tree.LayerSchema, "root/a", "waiting: length must be >= 1, but got 0")},
	"answers_extra_key":      {p(tree.LayerSchema, "root/a", "answers/0: additionalProperties 'by' not allowed")},
	"answers_missing_answer": {p(tree.LayerSchema, "root/a", "answers/0: missing properties: 'answer'")},
	"three_invariant_errors": {
		p(tree.LayerInvariant, "root", "children must be sorted by (order,id)"),
		p(tree.LayerInvariant, "root/b/x", "duplicate id 'x' (first at root/a/x)"),
		p(tree.LayerInvariant, "root/b/x", "max_attempts must be > 0"),
	},
}

func TestLoadFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "load", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	for name := range loadCases {
		if !slices.Contains(names, name) {
			t.Errorf("case %s has no testdata/load/%s.json", name, name)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			want, ok := loadCases[name]
			if !ok {
				t.Fatalf("testdata/load/%s.json has no expected problems in loadCases", name)
			}
			data, err := os.ReadFile(filepath.Join("testdata", "load", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			root, got := tree.Load(data)
			checkProblems(t, "Load", got, want)
			if !slices.IsSortedFunc(got, func(a, b tree.Problem) int { return strings.Compare(a.Path, b.Path) }) {
				t.Errorf("problems not sorted by path: %v", got)
			}

			// A tree is returned unless the json or schema layer failed.
			structural := len(want) > 0 && (want[0].Layer == tree.LayerJSON || want[0].Layer == tree.LayerSchema)
			if structural && root != nil {
				t.Errorf("Load returned a tree despite %s problems", want[0].Layer)
			}
			if !structural && root == nil {
				t.Errorf("Load returned no tree")
			}

			// Parse stops before the invariants.
			proot, pps := tree.Parse(data)
			if structural {
				checkProblems(t, "Parse", pps, want)
				if proot != nil {
					t.Errorf("Parse returned a tree despite problems")
				}
			} else if pps != nil || proot == nil {
				t.Errorf("Parse = %v, %v; want a tree and no problems", proot != nil, pps)
			}
		})
	}
}

// TestLoadBuildsNodes checks every field of a loaded tree.
func TestLoadBuildsNodes(t *testing.T) {
	root := mustLoad(t, readTestdata(t, "load/valid_nested.json"))
	want := nd("root", 0,
		nd("a", 1,
			passed(nd("a1", 1)),
			with(nd("a2", 2), func(n *tree.Node) { n.Attempts = 2; n.Next = tree.NextDecompose })),
		passed(nd("b", 2, passed(nd("b1", 1)))),
		with(nd("c", 2), func(n *tree.Node) { n.Acceptance = []string{"tests pass", "docs"} }),
	)
	if !tree.Equal(root, want) {
		t.Errorf("Load built\n%s\nwant\n%s", tree.Encode(root), tree.Encode(want))
	}
	if got := tree.Count(root); got != 7 {
		t.Errorf("Count = %d, want 7", got)
	}

	bounds := mustLoad(t, readTestdata(t, "load/valid_max_bounds.json"))
	a, b := find(t, bounds, "a"), find(t, bounds, "b")
	if a.Order != -9007199254740991 || b.Order != 9007199254740991 || a.Attempts != 1000000 || a.MaxAttempts != 1000000 {
		t.Errorf("bounds: a.order %d b.order %d a.attempts %d a.max_attempts %d", a.Order, b.Order, a.Attempts, a.MaxAttempts)
	}

	long := mustLoad(t, readTestdata(t, "load/valid_id_128.json"))
	if id := long.Children[0].ID; len(id) != tree.MaxIDLen || !tree.ValidID(id) {
		t.Errorf("128-character id %q (%d) not kept", id, len(id))
	}
}

// TestLoadAcceptsAnyFormatting: reading accepts any valid formatting
// (DESIGN.md decision 9), e.g. minified JSON and integral floats.
func TestLoadAcceptsAnyFormatting(t *testing.T) {
	data := `{"children":[],"max_attempts":3.0,"attempts":0,"passes":false,"next":"execute","acceptance":["x"],"goal":"g","title":"T","order":1e1,"id":"r"}`
	root := mustLoad(t, []byte(data))
	want := &tree.Node{ID: "r", Order: 10, Title: "T", Goal: "g", Acceptance: []string{"x"}, Next: "execute", MaxAttempts: 3, Children: []*tree.Node{}}
	if !tree.Equal(root, want) {
		t.Errorf("Load = %+v, want %+v", root, want)
	}
}

// TestIDPattern checks the node id pattern of DESIGN.md decision 8.
func TestIDPattern(t *testing.T) {
	valid := []string{"a", "A", "0", "a.b", "a_b", "a-b", "a..", "x.1.2", strings.Repeat("z", 128), "9" + strings.Repeat("-", 127)}
	invalid := []string{"", ".", "..", ".a", "-a", "_a", "a/b", "a b", "a\\b", "a:b", "é", "a\n", strings.Repeat("z", 129), "a~b"}
	re := regexp.MustCompile(tree.IDPattern)
	for _, id := range valid {
		if !tree.ValidID(id) || !re.MatchString(id) {
			t.Errorf("ValidID or IDPattern rejects %q", id)
		}
	}
	for _, id := range invalid {
		if tree.ValidID(id) || re.MatchString(id) {
			t.Errorf("ValidID or IDPattern accepts %q", id)
		}
	}
}

// TestProblemsFormat checks Problem.String, Problems.Error and Sorted.
func TestProblemsFormat(t *testing.T) {
	ps := tree.Problems{
		p(tree.LayerSchema, "root/b", "z"),
		p(tree.LayerJSON, "", "whole document"),
		p(tree.LayerInvariant, "root/a", "y"),
		p(tree.LayerImmutability, "root/a", "y"),
		p(tree.LayerInvariant, "root/a", "x"),
		p(tree.LayerSchema, "root/b", "z"),
	}
	want := tree.Problems{
		p(tree.LayerJSON, "", "whole document"),
		p(tree.LayerImmutability, "root/a", "y"),
		p(tree.LayerInvariant, "root/a", "x"),
		p(tree.LayerInvariant, "root/a", "y"),
		p(tree.LayerSchema, "root/b", "z"),
	}
	got := ps.Sorted()
	checkProblems(t, "Sorted", got, want)
	if ps[0].Path != "root/b" {
		t.Errorf("Sorted modified its receiver")
	}
	if s, w := got.Error(), "whole document; root/a: y; root/a: x; root/a: y; root/b: z"; s != w {
		t.Errorf("Error() = %q, want %q", s, w)
	}
	if s := (tree.Problems{}).Error(); s != "" {
		t.Errorf("empty Error() = %q", s)
	}
	if len(tree.Problems(nil).Sorted()) != 0 {
		t.Errorf("Sorted of nil is not empty")
	}
}
