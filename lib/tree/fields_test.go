package tree

import (
	"reflect"
	"testing"
)

// TestEveryFieldCompared holds the comparisons to every field of Node: a
// node that differs from another in any one field is not Equal to it, nor
// the same to the immutability checks (equalUnordered, sameOwn), and
// RestoreRunnerOwned puts back every runner-owned field. A field added to
// Node fails here until it is classified below and compared.
func TestEveryFieldCompared(t *testing.T) {
	runnerOwned := map[string]bool{
		"Next": true, "Passes": true, "Attempts": true, "MaxAttempts": true,
		"Evidence": true, "SentBack": true, "Waiting": true, "Answers": true,
	}
	others := map[string]bool{"ID": true, "Order": true, "Title": true, "Goal": true, "Acceptance": true, "Children": true}
	sample := func() *Node {
		return &Node{
			ID: "root", Order: 1, Title: "t", Goal: "g", Acceptance: []string{"a"}, Next: NextExecute,
			Attempts: 1, MaxAttempts: 3, Evidence: EvidenceWitness, Waiting: "q?",
			Answers: []Answer{{Question: "q", Answer: "a"}}, Children: []*Node{},
		}
	}
	typ := reflect.TypeOf(Node{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !runnerOwned[f.Name] && !others[f.Name] {
			t.Errorf("Node.%s is neither runner-owned nor the agent's: classify it here, compare it in sameFields and, if runner-owned, restore it in RestoreRunnerOwned", f.Name)
			continue
		}
		a, b := sample(), sample()
		v := reflect.ValueOf(b).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Int, reflect.Int64:
			v.SetInt(v.Int() + 1)
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.Slice:
			v.Set(reflect.Append(v, reflect.New(v.Type().Elem()).Elem()))
		default:
			t.Fatalf("Node.%s: a %s this test cannot change", f.Name, v.Kind())
		}
		if Equal(a, b) || equalUnordered(a, b) || sameOwn(a, b) {
			t.Errorf("Node.%s: nodes that differ in it compare equal (Equal %v, equalUnordered %v, sameOwn %v)", f.Name, Equal(a, b), equalUnordered(a, b), sameOwn(a, b))
		}
		if runnerOwned[f.Name] {
			if notes := RestoreRunnerOwned(a, b); !Equal(a, b) || len(notes) == 0 {
				t.Errorf("Node.%s: RestoreRunnerOwned did not put it back (notes %q)", f.Name, notes)
			}
		}
	}
}
