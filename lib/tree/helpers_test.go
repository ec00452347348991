package tree_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/treeloop/treeloop/lib/tree"
)

// nd builds an open node with max_attempts 3 and the given children.
func nd(id string, order int64, kids ...*tree.Node) *tree.Node {
	if kids == nil {
		kids = []*tree.Node{}
	}
	return &tree.Node{
		ID: id, Order: order, Title: "Task " + id, Goal: "", Acceptance: []string{},
		Next: tree.NextExecute, MaxAttempts: 3, Children: kids,
	}
}

// passed marks n passed and returns it.
func passed(n *tree.Node) *tree.Node {
	n.Passes = true
	return n
}

// with applies f to n and returns n.
func with(n *tree.Node, f func(*tree.Node)) *tree.Node {
	f(n)
	return n
}

// p builds a Problem.
func p(layer, path, msg string) tree.Problem {
	return tree.Problem{Layer: layer, Path: path, Message: msg}
}

// find returns the node with id or fails the test.
func find(t *testing.T, root *tree.Node, id string) *tree.Node {
	t.Helper()
	n, _ := tree.Find(root, id)
	if n == nil {
		t.Fatalf("node %q not in tree", id)
	}
	return n
}

// mustLoad loads data and fails on any problem.
func mustLoad(t testing.TB, data []byte) *tree.Node {
	t.Helper()
	n, ps := tree.Load(data)
	if len(ps) > 0 || n == nil {
		t.Fatalf("Load: %v", ps)
	}
	return n
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// problemsEqual compares problem lists, nil and empty being equal.
func problemsEqual(a, b tree.Problems) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func checkProblems(t *testing.T, what string, got, want tree.Problems) {
	t.Helper()
	if !problemsEqual(got, want) {
		t.Errorf("%s problems:\n got  %#v\n want %#v", what, got, want)
	}
}
