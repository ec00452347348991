package treeedit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// TestAdd: a new open leaf under a node that has not passed, with the id a
// decomposition would give it, after the last child or at --order, its
// max_attempts from config.toml unless given; a leaf it goes under becomes
// a parent with its next and attempts as they were; the commit names the
// new node and lists what it was given.
func TestAdd(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		id     string
		parent string
		want   tree.Node
		body   string
	}{
		{"under a leaf", []string{"add", "tried", "--title", "Half of it"}, "tried.1", "tried",
			tree.Node{Order: 1, Title: "Half of it", Goal: "Half of it", Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 7},
			"added: tried.1 (parent tried, order 1)\ntitle: \"Half of it\"\ngoal: \"Half of it\"\nacceptance: []\npasses: false\nnext: \"execute\"\nattempts: 0\nmax_attempts: 7"},
		{"after the last child", []string{"add", "parent", "--title", "More", "--goal", "Do more", "--acceptance", "a, b", "--acceptance", "c", "--next", "decompose", "--max-attempts", "2"}, "parent.2", "parent",
			tree.Node{Order: 2, Title: "More", Goal: "Do more", Acceptance: []string{"a, b", "c"}, Next: tree.NextDecompose, MaxAttempts: 2},
			"added: parent.2 (parent parent, order 2)\ntitle: \"More\"\ngoal: \"Do more\"\nacceptance: [\"a, b\",\"c\"]\npasses: false\nnext: \"decompose\"\nattempts: 0\nmax_attempts: 2"},
		{"first", []string{"add", "root", "--title", "First", "--order", "0"}, "root.1", "root",
			tree.Node{Order: 0, Title: "First", Goal: "First", Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 7}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := repo(t)
			writeConfig(t, root, "max_attempts_default = 7\n")
			before := start()
			code, stdout, stderr := run(t, root, c.args...)
			msg := "chore(loop): operator add node " + c.id
			head := gittest.Run(t, root, "rev-parse", "HEAD")
			if code != 0 || stderr != "" || stdout != "commit="+head+" "+msg+"\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			got := load(t, root)
			p, _ := tree.Find(got, c.parent)
			n, _ := tree.Find(got, c.id)
			if n == nil || p == nil || tree.Index(got)[c.id].Parent != p {
				t.Fatalf("no %s under %s:\n%s", c.id, c.parent, tree.Encode(got))
			}
			want := c.want
			want.ID, want.Children = c.id, []*tree.Node{}
			if !tree.Equal(n, &want) {
				t.Errorf("the new node:\n%s\nwant:\n%s", tree.Encode(n), tree.Encode(&want))
			}
			// Nothing else changed: the tree without the new node is the
			// tree before.
			p.Children = slicesDelete(p.Children, c.id)
			if !tree.Equal(got, before) {
				t.Errorf("other nodes changed:\n%s", tree.Encode(got))
			}
			if c.body != "" {
				if got, want := gittest.Run(t, root, "log", "-1", "--format=%B"), msg+"\n\n"+c.body; got != want {
					t.Errorf("commit message:\n%s\nwant:\n%s", got, want)
				}
			}
			if files := gittest.Run(t, root, "show", "--name-only", "--format=", "HEAD"); files != layout.Tree {
				t.Errorf("the commit holds %q", files)
			}
		})
	}
	// The first free id: tried.1 is taken once added, the next is tried.2;
	// the new leaf is selected before its parent (a leaf no more).
	root := repo(t)
	for _, want := range []string{"tried.1", "tried.2"} {
		if code, stdout, stderr := run(t, root, "add", "tried", "--title", "Part", "--max-attempts", "1"); code != 0 || !strings.HasSuffix(stdout, " node "+want+"\n") {
			t.Fatalf("exit %d, %q %q; want %s", code, stdout, stderr, want)
		}
	}
	got := load(t, root)
	if n, _ := tree.Find(got, "tried"); n.IsLeaf() || n.Attempts != 2 || n.Next != tree.NextExecute {
		t.Errorf("the parent: %s", tree.Encode(n))
	}
}

// TestAddRefusals: a passed parent, a waiting one, a title the schema
// refuses, an unknown parent and bad numbers, each with one line and
// nothing written.
func TestAddRefusals(t *testing.T) {
	for _, c := range []struct {
		name    string
		prepare func(t *testing.T, root string)
		args    []string
		code    int
		stderr  string
	}{
		{"passed", nil, []string{"add", "done", "--title", "x"}, 1,
			"tree-edit: node done has passed: passed nodes are immutable, no child is added to one (new work after a finished goal is a new goal: runner-init --new)\n"},
		{"waiting", func(t *testing.T, root string) {
			data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
			n, _ := tree.Load(data)
			w, _ := tree.Find(n, "tried")
			w.Waiting = "Which store?"
			os.WriteFile(filepath.Join(root, layout.Tree), tree.Encode(n), 0o644)
			gittest.Run(t, root, "commit", "-q", "-am", "a question")
		}, []string{"add", "tried", "--title", "x"}, 1,
			"tree-edit: node tried waits for an answer: answer it first (tree-edit answer tried TEXT), then add under it\n"},
		{"title too long", nil, []string{"add", "tried", "--title", strings.Repeat("t", 257)}, 1, ""},
		{"no title", nil, []string{"add", "tried"}, 80, ""},
		{"no parent", nil, []string{"add", "nosuch", "--title", "x"}, 1, "tree-edit: no node nosuch in .runner/state/tree.json\n"},
		{"bad parent", nil, []string{"add", "a b", "--title", "x"}, 80, "tree-edit: \"a b\" is not a node id\n"},
		{"bad attempts", nil, []string{"add", "tried", "--title", "x", "--max-attempts=-1"}, 80, "tree-edit: --max-attempts must be 1 to 1000000, got -1\n"},
		{"bad config", func(t *testing.T, root string) { writeConfig(t, root, "max_attempts_default = 0\n") }, []string{"add", "tried", "--title", "x"}, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := repo(t)
			if c.prepare != nil {
				c.prepare(t, root)
			}
			data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
			head := gittest.Run(t, root, "rev-parse", "HEAD")
			code, stdout, stderr := run(t, root, c.args...)
			if code != c.code || stdout != "" || !strings.HasPrefix(stderr, "tree-edit: ") || c.stderr != "" && stderr != c.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, %q", code, stdout, stderr, c.code, c.stderr)
			}
			if after, _ := os.ReadFile(filepath.Join(root, layout.Tree)); string(after) != string(data) {
				t.Error("a refused add changed tree.json")
			}
			if gittest.Run(t, root, "rev-parse", "HEAD") != head {
				t.Error("a refused add committed")
			}
		})
	}
}

// writeConfig writes config.toml, untracked (tree-edit commits tree.json
// alone).
func writeConfig(t *testing.T, root, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, layout.Config), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// slicesDelete is children without the node id.
func slicesDelete(children []*tree.Node, id string) []*tree.Node {
	var out []*tree.Node
	for _, k := range children {
		if k.ID != id {
			out = append(out, k)
		}
	}
	if out == nil {
		out = []*tree.Node{}
	}
	return out
}

// TestAddMaxAttemptsBound: --max-attempts takes the schema's bound itself,
// not one more.
func TestAddMaxAttemptsBound(t *testing.T) {
	root := repo(t)
	limit := strconv.Itoa(tree.MaxAttemptsLimit)
	if code, stdout, stderr := run(t, root, "add", "tried", "--title", "x", "--max-attempts", limit); code != 0 || stderr != "" || !strings.HasSuffix(stdout, " node tried.1\n") {
		t.Fatalf("--max-attempts %s: exit %d, %q %q", limit, code, stdout, stderr)
	}
	if n := node(t, load(t, root), "tried.1"); n.MaxAttempts != tree.MaxAttemptsLimit {
		t.Errorf("max_attempts %d", n.MaxAttempts)
	}
	over := strconv.Itoa(tree.MaxAttemptsLimit + 1)
	if code, stdout, stderr := run(t, root, "add", "tried", "--title", "y", "--max-attempts", over); code != 80 || stdout != "" || stderr != "tree-edit: --max-attempts must be 1 to "+limit+", got "+over+"\n" {
		t.Fatalf("--max-attempts %s: exit %d, %q %q", over, code, stdout, stderr)
	}
}
