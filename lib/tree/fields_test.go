package tree

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestFieldTableMatchesNode holds nodeFields, the table generated from
// the schema, to the Go struct: every field of Node is in the table,
// under its JSON key and a kind of its Go type, in at least one
// comparison and owned by exactly one of the agent and the runner; the
// table names no field Node lacks. A field added to Node and not to the
// schema (or the other way round) fails here.
func TestFieldTableMatchesNode(t *testing.T) {
	typ := reflect.TypeOf(Node{})
	if typ.NumField() != len(nodeFields) {
		t.Errorf("Node has %d fields, nodeFields %d: add the field to schemas/task_tree.v1.schema.json and run go generate ./...", typ.NumField(), len(nodeFields))
	}
	goKinds := map[string][]reflect.Kind{
		"string": {reflect.String}, "enum": {reflect.String}, "integer": {reflect.Int, reflect.Int64},
		"boolean": {reflect.Bool}, "strings": {reflect.Slice}, "objects": {reflect.Slice}, "children": {reflect.Slice},
	}
	for i, f := range nodeFields {
		sf, ok := typ.FieldByName(f.name)
		if !ok {
			t.Errorf("nodeFields names %s (%q), which Node lacks", f.name, f.key)
			continue
		}
		if sf.Index[0] != i {
			t.Errorf("Node.%s is field %d of Node, %d of the schema: Node keeps the schema's order", f.name, sf.Index[0], i)
		}
		if key, _, _ := strings.Cut(sf.Tag.Get("json"), ","); key != f.key {
			t.Errorf("Node.%s: JSON key %q, the schema's %q", f.name, key, f.key)
		}
		kinds, ok := goKinds[f.kind]
		if !ok || !slices.Contains(kinds, sf.Type.Kind()) {
			t.Errorf("Node.%s: a Go %s for a %q field", f.name, sf.Type.Kind(), f.kind)
		}
		if f.groups&(fieldEqual|fieldUnordered|fieldImmutable) == 0 {
			t.Errorf("Node.%s is compared nowhere", f.name)
		}
		if owners := f.groups & (fieldAgentOwned | fieldRunnerOwned); owners != fieldAgentOwned && owners != fieldRunnerOwned {
			t.Errorf("Node.%s: owned by the agent and the runner, or by neither (groups %b)", f.name, f.groups)
		}
	}
	for i := range typ.NumField() {
		if name := typ.Field(i).Name; !inTable(name) {
			t.Errorf("Node.%s is in no group of nodeFields: compared nowhere", name)
		}
	}
}

func inTable(name string) bool {
	for _, f := range nodeFields {
		if f.name == name {
			return f.groups != 0
		}
	}
	return false
}

// fieldSample is a node with a value in every field; passes as given.
func fieldSample(passes bool) *Node {
	return &Node{
		ID: "root", Order: 1, Title: "t", Goal: "g", Acceptance: []string{"a"}, Next: NextExecute,
		Passes: passes, Attempts: 1, MaxAttempts: 3, Evidence: EvidenceWitness, Waiting: "q?",
		Answers: []Answer{{Question: "q", Answer: "a"}}, Children: []*Node{},
	}
}

// plant changes the field of n that f names.
func plant(t *testing.T, n *Node, f nodeField) {
	t.Helper()
	v := reflect.ValueOf(n).Elem().FieldByName(f.name)
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Slice:
		item := reflect.New(v.Type().Elem()).Elem()
		if item.Kind() == reflect.Pointer { // a child
			item = reflect.ValueOf(&Node{ID: "extra", Title: "x", Next: NextExecute, Children: []*Node{}})
		}
		v.Set(reflect.Append(v, item))
	default:
		t.Fatalf("Node.%s: a %s this test cannot change", f.name, v.Kind())
	}
}

// TestEveryFieldCompared plants a difference in each field of nodeFields
// in turn: Equal, equalUnordered and the immutability checks (sameOwn,
// Immutability) see it as its groups say; RestoreRunnerOwned puts a
// runner-owned one back and leaves the agent's; RunnerOwnedChanges
// reports a human's change to a runner-owned one on an open node.
func TestEveryFieldCompared(t *testing.T) {
	for _, f := range nodeFields {
		a, b := fieldSample(true), fieldSample(true)
		plant(t, b, f)
		if got := Equal(a, b); got == (f.groups&fieldEqual != 0) {
			t.Errorf("Node.%s: Equal of nodes that differ in it is %v", f.name, got)
		}
		if got := equalUnordered(a, b); got == (f.groups&fieldUnordered != 0) {
			t.Errorf("Node.%s: equalUnordered of nodes that differ in it is %v", f.name, got)
		}
		if f.groups&fieldImmutable != 0 {
			if sameOwn(a, b) {
				t.Errorf("Node.%s: sameOwn of nodes that differ in it", f.name)
			}
			if ps := Immutability(a, b); len(ps) == 0 {
				t.Errorf("Node.%s: Immutability of a passed node changed in it reports nothing", f.name)
			}
		}
		prev, next := fieldSample(false), fieldSample(false)
		plant(t, next, f)
		ps := RunnerOwnedChanges(prev, next, ByHuman, nil)
		notes := RestoreRunnerOwned(prev, next)
		switch {
		case f.groups&fieldRunnerOwned != 0:
			if !Equal(prev, next) || len(notes) != 1 {
				t.Errorf("Node.%s: RestoreRunnerOwned did not put it back (notes %q)", f.name, notes)
			}
			if len(ps) == 0 {
				t.Errorf("Node.%s: RunnerOwnedChanges reports no change of it by a human", f.name)
			}
		case len(notes) != 0 || Equal(prev, next):
			t.Errorf("Node.%s: RestoreRunnerOwned changed an agent's field (notes %q)", f.name, notes)
		}
	}
}
