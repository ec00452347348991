package treeedit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/tree"
)

// commitTree changes the committed start tree with change and commits it.
func commitTree(t *testing.T, root string, change func(n *tree.Node)) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, layout.Tree))
	if err != nil {
		t.Fatal(err)
	}
	n, ps := tree.Load(data)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	change(n)
	if err := os.WriteFile(filepath.Join(root, layout.Tree), tree.Encode(n), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, root, "commit", "-q", "-am", "prepare")
}

// node is the node id of n, failing the test when there is none.
func node(t *testing.T, n *tree.Node, id string) *tree.Node {
	t.Helper()
	f, _ := tree.Find(n, id)
	if f == nil {
		t.Fatalf("no node %s in\n%s", id, tree.Encode(n))
	}
	return f
}

// halfPassed gives "parent" a passed child beside its open one: an open
// node whose subtree holds a passed node.
func halfPassed(n *tree.Node) {
	p, _ := tree.Find(n, "parent")
	p.Children = append(p.Children, &tree.Node{ID: "parent.2", Order: 2, Title: "T parent.2", Goal: "G", Acceptance: []string{},
		Next: tree.NextExecute, Passes: true, Attempts: 1, MaxAttempts: 3, Children: []*tree.Node{}})
}

// TestRemoveMove: remove and move change the tree as asked, nothing else,
// and say so in the commit body: the node's place before and after, what
// was removed with it, and the passes the edit derived.
func TestRemoveMove(t *testing.T) {
	for _, c := range []struct {
		name    string
		prepare func(n *tree.Node)
		args    []string
		id      string
		want    func(t *testing.T, n *tree.Node)
		body    string
	}{
		{"remove a leaf", nil, []string{"remove", "tried"}, "tried", func(t *testing.T, n *tree.Node) {
			n.Children = slicesDelete(n.Children, "tried")
		}, `removed: tried "T tried" (parent root) with 0 node(s) under it`},
		{"remove a subtree", nil, []string{"remove", "parent"}, "parent", func(t *testing.T, n *tree.Node) {
			n.Children = slicesDelete(n.Children, "parent")
		}, `removed: parent "T parent" (parent root) with 1 node(s) under it`},
		{"remove the last open child", halfPassed, []string{"remove", "parent.1"}, "parent.1", func(t *testing.T, n *tree.Node) {
			p := node(t, n, "parent")
			p.Children = slicesDelete(p.Children, "parent.1")
			p.Passes = true
		}, "removed: parent.1 \"T parent.1\" (parent parent) with 0 node(s) under it\npasses of parent: false -> true (all its children pass)"},
		{"move under a parent", nil, []string{"move", "tried", "--parent", "parent"}, "tried", func(t *testing.T, n *tree.Node) {
			k := node(t, n, "tried")
			n.Children = slicesDelete(n.Children, "tried")
			k.Order = 2
			p := node(t, n, "parent")
			p.Children = append(p.Children, k)
		}, "parent: root -> parent\norder: 3 -> 2"},
		{"move to the root's end", nil, []string{"move", "parent.1", "--parent", "root"}, "parent.1", func(t *testing.T, n *tree.Node) {
			p := node(t, n, "parent")
			k := p.Children[0]
			p.Children = []*tree.Node{}
			k.Order = 6
			n.Children = append(n.Children, k)
		}, "parent: parent -> root\norder: 1 -> 6"},
		{"move under a leaf", nil, []string{"move", "stuck", "--parent", "split"}, "stuck", func(t *testing.T, n *tree.Node) {
			k := node(t, n, "stuck")
			n.Children = slicesDelete(n.Children, "stuck")
			k.Order = 1
			node(t, n, "split").Children = []*tree.Node{k}
		}, "parent: root -> split\norder: 2 -> 1"},
		{"move at an order", nil, []string{"move", "tried", "--parent", "parent", "--order", "0"}, "tried", func(t *testing.T, n *tree.Node) {
			k := node(t, n, "tried")
			n.Children = slicesDelete(n.Children, "tried")
			k.Order = 0
			p := node(t, n, "parent")
			p.Children = append([]*tree.Node{k}, p.Children...)
		}, "parent: root -> parent\norder: 3 -> 0"},
		{"move to another order", nil, []string{"move", "tried", "--parent", "root", "--order", "9"}, "tried", func(t *testing.T, n *tree.Node) {
			k := node(t, n, "tried")
			n.Children = append(slicesDelete(n.Children, "tried"), k)
			k.Order = 9
		}, "parent: root -> root\norder: 3 -> 9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := repo(t)
			want := start()
			if c.prepare != nil {
				commitTree(t, root, c.prepare)
				c.prepare(want)
			}
			before := gittest.Run(t, root, "rev-parse", "HEAD")
			c.want(t, want)
			code, stdout, stderr := run(t, root, c.args...)
			msg := "chore(loop): operator " + c.args[0] + " node " + c.id
			head := gittest.Run(t, root, "rev-parse", "HEAD")
			if code != 0 || stderr != "" || stdout != "commit="+head+" "+msg+"\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if got := load(t, root); !tree.Equal(got, want) {
				t.Fatalf("tree after the edit:\n%s\nwant:\n%s", tree.Encode(got), tree.Encode(want))
			}
			if gittest.Run(t, root, "rev-parse", "HEAD^") != before {
				t.Fatal("not one commit on the one before")
			}
			if got, want := gittest.Run(t, root, "log", "-1", "--format=%B"), msg+"\n\n"+c.body; got != want {
				t.Errorf("commit message:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestRemoveMoveRefusals: the root, passed nodes, subtrees holding one,
// a passed or unknown new parent and a move under itself are refused
// with one line, nothing written.
func TestRemoveMoveRefusals(t *testing.T) {
	for _, c := range []struct {
		name    string
		prepare func(n *tree.Node)
		args    []string
		code    int
		stderr  string
	}{
		{"remove the root", nil, []string{"remove", "root"}, 1, "node root is the root: it cannot be removed"},
		{"move the root", nil, []string{"move", "root", "--parent", "parent"}, 1, "node root is the root: it cannot be moved"},
		{"remove a passed node", nil, []string{"remove", "done"}, 1, "node done has passed: passed nodes are immutable"},
		{"remove a passed subtree", halfPassed, []string{"remove", "parent"}, 1,
			"node parent.2 has passed under parent: passed nodes are immutable, so parent cannot be removed"},
		{"move a passed subtree", halfPassed, []string{"move", "parent", "--parent", "tried"}, 1,
			"node parent.2 has passed under parent: passed nodes are immutable, so parent cannot be moved"},
		{"under itself", nil, []string{"move", "parent", "--parent", "parent.1"}, 1,
			"node parent.1 is in the subtree of parent: a node cannot move under itself"},
		{"under the node", nil, []string{"move", "parent", "--parent", "parent"}, 1,
			"node parent is in the subtree of parent: a node cannot move under itself"},
		{"under a passed node", nil, []string{"move", "tried", "--parent", "done"}, 1,
			"node done has passed: passed nodes are immutable, no child is added to one"},
		{"under no node", nil, []string{"move", "tried", "--parent", "nosuch"}, 1, "no node nosuch in .runner/state/tree.json"},
		{"bad parent", nil, []string{"move", "tried", "--parent", "a b"}, 80, `--parent "a b" is not a node id`},
		{"where it is", nil, []string{"move", "tried", "--parent", "root", "--order", "3"}, 1, "node tried already is as asked: nothing to commit"},
		{"bad evidence", nil, []string{"set", "tried", "evidence", "strong"}, 80, `evidence is witness, suite or default, not "strong"`},
		{"no evidence to remove", nil, []string{"set", "tried", "evidence", "default"}, 1, "node tried already is as asked: nothing to commit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := repo(t)
			if c.prepare != nil {
				commitTree(t, root, c.prepare)
			}
			data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
			head := gittest.Run(t, root, "rev-parse", "HEAD")
			code, stdout, stderr := run(t, root, c.args...)
			if code != c.code || stdout != "" || stderr != "tree-edit: "+c.stderr+"\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, %q", code, stdout, stderr, c.code, c.stderr)
			}
			if after, _ := os.ReadFile(filepath.Join(root, layout.Tree)); string(after) != string(data) {
				t.Error("a refused edit changed tree.json")
			}
			if gittest.Run(t, root, "rev-parse", "HEAD") != head {
				t.Error("a refused edit committed")
			}
		})
	}
}

// TestSetEvidence: witness and suite are set, default removes the field.
func TestSetEvidence(t *testing.T) {
	root := repo(t)
	for _, c := range []struct{ value, want string }{
		{"witness", tree.EvidenceWitness}, {"suite", tree.EvidenceSuite}, {"default", ""},
	} {
		if code, stdout, stderr := run(t, root, "set", "tried", "evidence", c.value); code != 0 || stderr != "" || !strings.HasSuffix(stdout, " node tried\n") {
			t.Fatalf("%s: exit %d, %q %q", c.value, code, stdout, stderr)
		}
		got := load(t, root)
		want := start()
		node(t, want, "tried").Evidence = c.want
		if !tree.Equal(got, want) {
			t.Fatalf("%s: tree\n%s", c.value, tree.Encode(got))
		}
	}
	if n := gittest.Run(t, root, "rev-list", "--count", "HEAD"); n != "4" {
		t.Errorf("%s commits, want 4 (start and one for each edit)", n)
	}
}

// TestRetryUnbacked: retry reopens a passed node that no loop commit
// backs, with its passed ancestors (a parent passes only with all its
// children); attempts go back to 0.
func TestRetryUnbacked(t *testing.T) {
	root := repo(t)
	commitTree(t, root, func(n *tree.Node) {
		p := node(t, n, "parent")
		p.Passes = true
		p.Children[0].Passes = true
	})
	if err := runstate.Save(filepath.Join(root, layout.RunState), runstate.New("run-t")); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, root, "add", "-A")
	gittest.Run(t, root, "commit", "-q", "-m", "run state")

	code, stdout, stderr := run(t, root, "retry", "parent.1")
	if code != 0 || stderr != "" || !strings.HasSuffix(stdout, " chore(loop): operator retry node parent.1\n") {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	if got, want := load(t, root), start(); !tree.Equal(got, want) {
		t.Fatalf("tree after the retry:\n%s\nwant:\n%s", tree.Encode(got), tree.Encode(want))
	}
	if got, want := gittest.Run(t, root, "log", "-1", "--format=%b"), "passes: true -> false"; got != want {
		t.Errorf("commit body %q, want %q", got, want)
	}

	// A passed node alone: attempts back to 0 and max_attempts set too.
	code, stdout, stderr = run(t, root, "retry", "done", "--attempts", "2")
	if code != 0 || stderr != "" || stdout == "" {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	want := start()
	d := node(t, want, "done")
	d.Passes, d.Attempts, d.MaxAttempts = false, 0, 2
	if got := load(t, root); !tree.Equal(got, want) {
		t.Fatalf("tree after the retry:\n%s\nwant:\n%s", tree.Encode(got), tree.Encode(want))
	}
}

// TestRetryPassedUnaudited: with no run state the audit cannot run, and
// retry of a passed node is a runner error, nothing written.
func TestRetryPassedUnaudited(t *testing.T) {
	root := repo(t)
	head := gittest.Run(t, root, "rev-parse", "HEAD")
	code, stdout, stderr := run(t, root, "retry", "done")
	if code != 6 || stdout != "" || !strings.HasPrefix(stderr, "tree-edit: audit the passed nodes against the run's history: ") {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	if gittest.Run(t, root, "rev-parse", "HEAD") != head {
		t.Error("committed")
	}
}

// TestLockError: a lock file that cannot be opened is a runner error,
// not a runner holding it.
func TestLockError(t *testing.T) {
	root := repo(t)
	if err := os.Symlink(filepath.Join(root, "nodir", "lock"), filepath.Join(root, layout.Lock)); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, root, "retry", "stuck")
	if code != 6 || stdout != "" || !strings.HasPrefix(stderr, "tree-edit: lock .runner/lock: ") {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
}
