package tree_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/treeloop/treeloop/lib/tree"
)

// addFixtures seeds f with every testdata/load fixture.
func addFixtures(f *testing.F, add func(data []byte)) {
	files, err := filepath.Glob(filepath.Join("testdata", "load", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		add(data)
	}
}

// FuzzLoad: Load never panics; problems are sorted and come without a tree
// for json/schema failures; a tree without problems re-encodes to bytes that
// load cleanly and are a fixed point of Encode; Select never panics and picks
// an open leaf at the path Find reports.
func FuzzLoad(f *testing.F) {
	addFixtures(f, func(data []byte) { f.Add(data) })
	f.Add([]byte(goldenCanonical))
	f.Add([]byte(`{"id":"r","order":0,"title":"T","goal":"","acceptance":[],"next":"execute","passes":false,"attempts":0,"max_attempts":1,"children":[]}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"id":"r","id":"r"}`))
	f.Add([]byte("\xEF\xBB\xBF{}"))
	f.Add([]byte(`{"id":"r","order":1e400}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		root, ps := tree.Load(data)
		if !slices.IsSortedFunc(ps, func(a, b tree.Problem) int { return strings.Compare(a.Path, b.Path) }) {
			t.Fatalf("problems not sorted: %v", ps)
		}
		if len(ps) > 0 && (ps[0].Layer == tree.LayerJSON || ps[0].Layer == tree.LayerSchema) && root != nil {
			t.Fatalf("tree returned with %s problems", ps[0].Layer)
		}
		if root == nil {
			if len(ps) == 0 {
				t.Fatalf("no tree and no problems")
			}
			return
		}
		checkSelection(t, root)
		if len(ps) > 0 {
			_ = tree.Encode(root) // must not panic either
			return
		}
		once := tree.Encode(root.Clone())
		again, ps := tree.Load(once)
		if len(ps) > 0 {
			t.Fatalf("Encode output does not load: %v\n%s", ps, once)
		}
		if !tree.Equal(root, again) {
			t.Fatalf("Load(Encode(t)) differs from t")
		}
		twice := tree.Encode(again)
		if !bytes.Equal(once, twice) {
			t.Fatalf("Encode not a fixed point:\n%s\n%s", once, twice)
		}
		if !tree.IsCanonical(once, again) {
			t.Fatalf("IsCanonical(Encode(t)) = false")
		}
		if tree.IsCanonical(data, root) != bytes.Equal(data, once) {
			t.Fatalf("IsCanonical disagrees with Encode")
		}
	})
}

// checkSelection checks Select's answer against the tree.
func checkSelection(t *testing.T, root *tree.Node) {
	t.Helper()
	s := tree.Select(root)
	_ = s.String()
	if s.Status == tree.StatusComplete {
		if s.Node != nil {
			t.Fatalf("complete with a node")
		}
		return
	}
	if s.Node == nil || !s.Node.IsLeaf() || s.Node.Passes {
		t.Fatalf("Select picked %+v, not an open leaf", s.Node)
	}
	if (s.Status == tree.StatusWaiting) != s.Node.IsWaiting() {
		t.Fatalf("status %s for a node waiting=%q", s.Status, s.Node.Waiting)
	}
	if s.Status != tree.StatusWaiting && (s.Status == tree.StatusStuck) != (s.Node.Attempts >= s.Node.MaxAttempts) {
		t.Fatalf("status %s with attempts %d/%d", s.Status, s.Node.Attempts, s.Node.MaxAttempts)
	}
	if !strings.HasPrefix(s.Path, root.ID) || !strings.HasSuffix(s.Path, s.Node.ID) {
		t.Fatalf("path %q for %q", s.Path, s.Node.ID)
	}
	checkSkip(t, root, s)
}

// checkSkip checks SelectWith under StuckSkip against Select's answer
// stop: the same where stop found a leaf with attempts left or none at
// all; otherwise a leaf with attempts left, or waiting, or stuck naming
// the leftmost of Stuck's list.
func checkSkip(t *testing.T, root *tree.Node, stop tree.Selection) {
	t.Helper()
	s := tree.SelectWith(root, tree.StuckSkip)
	if stop.Status != tree.StatusStuck {
		if s.String() != stop.String() || s.Path != stop.Path {
			t.Fatalf("skip selected %s, stop %s", s, stop)
		}
		return
	}
	stuck := tree.Stuck(root)
	switch s.Status {
	case tree.StatusOpen:
		if s.Node.Attempts >= s.Node.MaxAttempts || s.Node.IsWaiting() {
			t.Fatalf("skip selected %s", s)
		}
	case tree.StatusStuck:
		if len(stuck) == 0 || stuck[0].Node != s.Node || stuck[0].Path != s.Path {
			t.Fatalf("skip stuck on %s, Stuck lists %v", s, stuck)
		}
	case tree.StatusWaiting:
		if !s.Node.IsWaiting() {
			t.Fatalf("skip waiting on %s", s)
		}
	default:
		t.Fatalf("skip found %s where stop was stuck", s)
	}
}

// fallbackTree is used when the fuzz bytes are not a valid tree.
func fallbackTree() *tree.Node {
	return nd("root", 0,
		nd("a", 1, passed(nd("a1", 1)), with(nd("a2", 2), func(n *tree.Node) { n.Attempts = 2 })),
		nd("b", 2, nd("b.1", 1), with(nd("b2", 2), func(n *tree.Node) { n.Next = tree.NextDecompose })),
		passed(nd("c", 3)),
		with(nd("d", 4), func(n *tree.Node) { n.Attempts, n.MaxAttempts = 1, 1 }),
	)
}

// fuzzText returns s when it is a valid title-like string (1..256 runes of
// valid UTF-8), else def: the agent output schema guarantees that much.
func fuzzText(s, def string, maxRunes int) string {
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxRunes {
		return def
	}
	return s
}

// FuzzTransition builds a tree from the fuzz bytes (or falls back to a fixed
// tree), picks a leaf and an outcome from the fuzz values and checks: a
// successful Transition yields a tree that loads with no problems and that
// Encode leaves fixed; a failed one leaves the tree unchanged.
func FuzzTransition(f *testing.F) {
	f.Add([]byte{}, uint16(0), uint8(0), uint8(0), uint8(2), int32(3), "Child", "goal")
	f.Add([]byte{}, uint16(1), uint8(2), uint8(2), uint8(3), int32(5), "Child <&>", "")
	f.Add([]byte{}, uint16(2), uint8(1), uint8(1), uint8(0), int32(1), "x", "g")
	f.Add([]byte{}, uint16(3), uint8(0), uint8(1), uint8(1), int32(0), "", "")
	f.Add([]byte{}, uint16(4), uint8(2), uint8(2), uint8(7), int32(-1), "é", "\n")
	f.Add([]byte(goldenCanonical), uint16(1), uint8(0), uint8(0), uint8(1), int32(1000000), "T", "")
	f.Add([]byte{}, uint16(1), uint8(4), uint8(2), uint8(0), int32(3), "T", "Which store?")
	addFixtures(f, func(data []byte) {
		f.Add(data, uint16(0), uint8(2), uint8(2), uint8(2), int32(3), "T", "")
	})
	f.Fuzz(func(t *testing.T, data []byte, pick uint16, status, guard, nkids uint8, maxAttempts int32, title, goal string) {
		root, ps := tree.Load(data)
		if root == nil || len(ps) > 0 {
			root = fallbackTree()
		}
		selected := fuzzSelected(root, pick)
		o := fuzzOutcome(status, guard, nkids, title, goal)
		// Transition checks max_attempts >= 1 but not the schema's maximum
		// of 1000000 (nor the children's fields, which agentout validates):
		// stay inside the schema's range, with values below 1 for the errors.
		ma := int(maxAttempts) % 1000001

		before := root.Clone()
		err := tree.Transition(root, selected, o, ma)
		if err != nil {
			if !tree.Equal(root, before) {
				t.Fatalf("failed Transition (%v) changed the tree", err)
			}
			return
		}
		b, _ := tree.Find(before, selected)
		if b == nil || !b.IsLeaf() || b.Passes || b.IsWaiting() {
			t.Fatalf("Transition succeeded on %q, not an open leaf or a waiting one", selected)
		}
		once := tree.Encode(root)
		again, ps := tree.Load(once)
		if len(ps) > 0 {
			t.Fatalf("Transition(%q, %+v, %d) result does not load: %v\n%s", selected, o, ma, ps, once)
		}
		if !bytes.Equal(once, tree.Encode(again)) {
			t.Fatalf("result not a fixed point of Encode")
		}
		n, _ := tree.Find(again, selected)
		checkTransitioned(t, selected, o, ma, b, n)
		if tree.Count(again) != tree.Count(before)+len(n.Children) {
			t.Fatalf("node count %d -> %d", tree.Count(before), tree.Count(again))
		}
		checkSelection(t, again)
	})
}

// fuzzSelected picks the node FuzzTransition transitions: every leaf,
// open or not, so the error paths run too; one pick value in eight takes
// an internal node or an unknown id.
func fuzzSelected(root *tree.Node, pick uint16) string {
	var ids []string
	for id, e := range tree.Index(root) {
		if e.Node.IsLeaf() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	selected := ids[int(pick)%len(ids)]
	switch pick % 8 {
	case 7:
		selected = root.ID
	case 6:
		if pick%16 == 14 {
			selected = "no-such-node"
		}
	}
	return selected
}

// fuzzOutcome is FuzzTransition's outcome: a status (one unknown among
// them), a guard outcome, up to five children and a question.
func fuzzOutcome(status, guard, nkids uint8, title, goal string) tree.Outcome {
	statuses := []string{tree.AgentDone, tree.AgentRetry, tree.AgentDecomposed, "bogus", tree.AgentBlocked}
	guards := []string{tree.GuardPass, tree.GuardFail, tree.GuardSkipped, ""}
	o := tree.Outcome{Status: statuses[int(status)%len(statuses)], Guard: guards[int(guard)%len(guards)], Question: goal}
	for i := range int(nkids) % 6 {
		nexts := []string{tree.NextExecute, tree.NextDecompose, ""}
		o.Children = append(o.Children, tree.NewChild{
			Title:      fuzzText(title, "T", 256),
			Goal:       fuzzText(goal, "", 16384),
			Acceptance: []string{fuzzText(goal, "", 4096)},
			Next:       nexts[i%len(nexts)],
		})
	}
	return o
}

// checkTransitioned checks the selected node after a successful
// Transition (n) against itself before (b), by the outcome o.
func checkTransitioned(t *testing.T, selected string, o tree.Outcome, ma int, b, n *tree.Node) {
	t.Helper()
	switch {
	case o.Status == tree.AgentDone && o.Guard == tree.GuardPass:
		if !n.Passes || n.Attempts != b.Attempts {
			t.Fatalf("done+pass: %q passes=%v attempts %d -> %d", selected, n.Passes, b.Attempts, n.Attempts)
		}
	case o.Status == tree.AgentDecomposed:
		if len(n.Children) != len(o.Children) || n.Passes || n.Attempts != b.Attempts {
			t.Fatalf("decomposed into %d children, want %d", len(n.Children), len(o.Children))
		}
		for i, c := range n.Children {
			if c.Order != int64(i+1) || c.Passes || c.Attempts != 0 || c.MaxAttempts != ma {
				t.Fatalf("new child %+v", c)
			}
		}
	case o.Status == tree.AgentBlocked:
		if n.Waiting == "" || n.Attempts != b.Attempts || n.Passes {
			t.Fatalf("blocked: %q waiting=%q attempts %d -> %d", selected, n.Waiting, b.Attempts, n.Attempts)
		}
	default: // done+fail, retry+skipped
		if n.Attempts != min(b.Attempts+1, b.MaxAttempts) || n.Passes {
			t.Fatalf("%s+%s: attempts %d -> %d", o.Status, o.Guard, b.Attempts, n.Attempts)
		}
	}
}
