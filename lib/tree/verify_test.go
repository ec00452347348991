package tree

import (
	"reflect"
	"strings"
	"testing"
)

// TestVerify: Verify(n, Encode(n)) gives exactly Load(Encode(n))'s
// problems, for every tree of the fixtures and the fuzz corpus that loads
// and for each of them changed to break one bound of the schema, an
// invariant or the nesting limit, or to stay valid at a bound.
func TestVerify(t *testing.T) {
	seeds := 0
	for _, data := range fastSeeds(t) {
		root, ps := Load(data)
		if root == nil || len(ps) > 0 {
			continue
		}
		seeds++
		for name, change := range verifyChanges() {
			n := root.Clone()
			change(n)
			enc := Encode(n)
			_, want := Load(enc)
			if got := Verify(n, enc); !reflect.DeepEqual(got, want) {
				t.Errorf("%s of %.60q: Verify = %v, Load = %v", name, data, got, want)
			}
		}
	}
	if seeds < 3 {
		t.Fatalf("only %d valid seeds", seeds)
	}
}

// verifyChanges are changes to a valid tree that break one bound of the
// schema, an invariant or the nesting limit, or keep it valid (at a
// bound, with optional fields set or emptied).
func verifyChanges() map[string]func(n *Node) {
	deep := func(n *Node, levels int) {
		cur := n
		for i := range levels {
			c := &Node{ID: "deep" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i), Title: "d", Acceptance: []string{}, Next: NextExecute, MaxAttempts: 1, Children: []*Node{}}
			cur.Children = append(cur.Children, c)
			cur = c
		}
	}
	return map[string]func(n *Node){
		"unchanged":           func(*Node) {},
		"title at its bound":  func(n *Node) { n.Title = strings.Repeat("é", nodeTitleMaxLength) },
		"title too long":      func(n *Node) { n.Title = strings.Repeat("é", nodeTitleMaxLength+1) },
		"title empty":         func(n *Node) { n.Title = "" },
		"title invalid UTF-8": func(n *Node) { n.Title = strings.Repeat("\xff", nodeTitleMaxLength) },
		"title 257 bad bytes": func(n *Node) { n.Title = strings.Repeat("\xff", nodeTitleMaxLength+1) },
		"goal too long":       func(n *Node) { n.Goal = strings.Repeat("g", nodeGoalMaxLength+1) },
		"too many criteria":   func(n *Node) { n.Acceptance = make([]string, nodeAcceptanceMaxItems+1) },
		"criterion too long":  func(n *Node) { n.Acceptance = []string{strings.Repeat("a", nodeAcceptanceItemMaxLength+1)} },
		"attempts too many":   func(n *Node) { n.Attempts, n.MaxAttempts = nodeAttemptsMaximum+1, nodeAttemptsMaximum+1 },
		"attempts over max":   func(n *Node) { n.Attempts, n.MaxAttempts = 3, 2 },
		"max_attempts zero":   func(n *Node) { n.Attempts, n.MaxAttempts = 0, 0 },
		"negative attempts":   func(n *Node) { n.Attempts = -1 },
		"order too large":     func(n *Node) { n.Order = nodeOrderMaximum + 1 },
		"order at its bound":  func(n *Node) { n.Order = -nodeOrderMaximum },
		"order at its top":    func(n *Node) { n.Order = nodeOrderMaximum },
		"criteria at their bound": func(n *Node) {
			n.Acceptance = make([]string, nodeAcceptanceMaxItems)
			for i := range n.Acceptance {
				n.Acceptance[i] = strings.Repeat("a", nodeAcceptanceItemMaxLength)
			}
		},
		"attempts at their bound": func(n *Node) { n.Attempts, n.MaxAttempts = nodeAttemptsMaximum, nodeMaxAttemptsMaximum },
		"next unknown":            func(n *Node) { n.Next = "later" },
		"id invalid":              func(n *Node) { n.ID = "no spaces" },
		"duplicate id":            func(n *Node) { deep(n, 1); n.Children[len(n.Children)-1].ID = n.ID },
		"nil slices":              func(n *Node) { n.Acceptance, n.Children = nil, nil },
		"nested to the bound":     func(n *Node) { deep(n, fastMaxDepth) },
		"nested past the fast":    func(n *Node) { deep(n, fastMaxDepth+1) },
		"evidence set":            func(n *Node) { n.Evidence = EvidenceWitness },
		"evidence unknown":        func(n *Node) { n.Evidence = "maybe" },
		"answers empty":           func(n *Node) { n.Answers = []Answer{} },
		"answered":                func(n *Node) { n.Answers = []Answer{{Question: "why?", Answer: "because"}} },
		"waiting":                 func(n *Node) { n.Waiting = "which one?" },
		"goal invalid UTF-8":      func(n *Node) { deep(n, 2); n.Children[len(n.Children)-1].Children[0].Goal = "g\xffg" },
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// TestFastParsedWithinBounds: every tree the fast path reads is within
// the bounds Verify checks (withinBounds), so a writer that verifies a
// tree it will write is spared the load: optional fields absent (no
// evidence, no waiting, no answers) included, as most trees are.
func TestFastParsedWithinBounds(t *testing.T) {
	taken := 0
	for _, data := range fastSeeds(t) {
		root, ok := fastParse(data)
		if !ok {
			continue
		}
		taken++
		if !withinBounds(root, 0) {
			t.Errorf("the fast path read %.80q, which withinBounds refuses", data)
		}
		for _, change := range []func(n *Node){
			func(n *Node) { n.Evidence = "" },
			func(n *Node) { n.Evidence = EvidenceWitness },
			func(n *Node) { n.Waiting, n.Answers = "", nil },
		} {
			n := root.Clone()
			change(n)
			if _, ok := fastParse(Encode(n)); ok != withinBounds(n, 0) {
				t.Errorf("%.80q changed: the fast path reads it %v, withinBounds says %v", data, ok, !ok)
			}
		}
	}
	if taken < 3 {
		t.Fatalf("only %d seeds took the fast path", taken)
	}
}
