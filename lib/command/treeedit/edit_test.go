package treeedit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// start is the tree of a run in progress: "done" passed, "stuck" with no
// attempts left, "tried" an execute leaf with attempts used, "split" a
// decompose leaf with attempts used, "parent" an open node with a child.
func start() *tree.Node {
	leaf := func(id string, order int64, next string, passes bool, attempts int) *tree.Node {
		return &tree.Node{ID: id, Order: order, Title: "T " + id, Goal: "G " + id, Acceptance: []string{"a " + id},
			Next: next, Passes: passes, Attempts: attempts, MaxAttempts: 3, Children: []*tree.Node{}}
	}
	parent := leaf("parent", 5, tree.NextDecompose, false, 1)
	parent.Children = []*tree.Node{leaf("parent.1", 1, tree.NextExecute, false, 0)}
	return &tree.Node{ID: "root", Title: "Root", Goal: "g", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3,
		Children: []*tree.Node{
			leaf("done", 1, tree.NextExecute, true, 1),
			leaf("stuck", 2, tree.NextExecute, false, 3),
			leaf("tried", 3, tree.NextExecute, false, 2),
			leaf("split", 4, tree.NextDecompose, false, 2),
			parent,
		}}
}

// repo is a repository on branch runner/run-t with the start tree
// committed.
func repo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	gittest.Run(t, root, "init", "-q", "-b", "runner/run-t")
	if err := os.MkdirAll(filepath.Join(root, layout.State), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, layout.Tree), tree.Encode(start()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("/.runner/lock\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, root, "add", "-A")
	gittest.Run(t, root, "commit", "-q", "-m", "start")
	return root
}

// run runs tree-edit in root with gittest's environment.
func run(t *testing.T, root string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	gittest.Setenv(t, root)
	var out, errb bytes.Buffer
	code = Main(append([]string{"-C", root}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func load(t *testing.T, root string) *tree.Node {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, layout.Tree))
	if err != nil {
		t.Fatal(err)
	}
	n, ps := tree.Load(data)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if !bytes.Equal(data, tree.Encode(n)) {
		t.Fatal("tree.json is not canonical after the edit")
	}
	return n
}

// TestEdits: each action from a state where each of its changes shows;
// the node afterwards is the node before with exactly those fields
// changed, every other node is untouched, and the commit (tree.json
// alone) says what changed in its body.
func TestEdits(t *testing.T) {
	for _, c := range []struct {
		args   []string
		id     string
		change func(n *tree.Node)
		body   []string
	}{
		{[]string{"retry", "stuck"}, "stuck", func(n *tree.Node) { n.Attempts = 0 },
			[]string{"attempts: 3 -> 0"}},
		{[]string{"retry", "stuck", "--attempts=0"}, "stuck", func(n *tree.Node) { n.Attempts = 0 },
			[]string{"attempts: 3 -> 0"}},
		{[]string{"retry", "stuck", "--attempts", "5"}, "stuck", func(n *tree.Node) { n.Attempts, n.MaxAttempts = 0, 5 },
			[]string{"attempts: 3 -> 0", "max_attempts: 3 -> 5"}},
		{[]string{"retry", "tried", "--attempts", "1"}, "tried", func(n *tree.Node) { n.Attempts, n.MaxAttempts = 0, 1 },
			[]string{"attempts: 2 -> 0", "max_attempts: 3 -> 1"}},
		{[]string{"retry", "parent"}, "parent", func(n *tree.Node) { n.Attempts = 0 },
			[]string{"attempts: 1 -> 0"}},
		{[]string{"retry", "root", "--attempts", "4"}, "root", func(n *tree.Node) { n.MaxAttempts = 4 },
			[]string{"max_attempts: 3 -> 4"}},
		{[]string{"decompose", "tried"}, "tried", func(n *tree.Node) { n.Next, n.Attempts = tree.NextDecompose, 0 },
			[]string{`next: "execute" -> "decompose"`, "attempts: 2 -> 0"}},
		{[]string{"decompose", "split"}, "split", func(n *tree.Node) { n.Attempts = 0 },
			[]string{"attempts: 2 -> 0"}},
		{[]string{"decompose", "parent.1"}, "parent.1", func(n *tree.Node) { n.Next = tree.NextDecompose },
			[]string{`next: "execute" -> "decompose"`}},
		{[]string{"set", "tried", "title", "New \"title\""}, "tried", func(n *tree.Node) { n.Title = `New "title"` },
			[]string{`title: "T tried" -> "New \"title\""`}},
		{[]string{"set", "stuck", "goal", "Do it\nwell"}, "stuck", func(n *tree.Node) { n.Goal = "Do it\nwell" },
			[]string{`goal: "G stuck" -> "Do it\nwell"`}},
		{[]string{"set", "parent", "acceptance", `["x", "y"]`}, "parent", func(n *tree.Node) { n.Acceptance = []string{"x", "y"} },
			[]string{`acceptance: ["a parent"] -> ["x","y"]`}},
		{[]string{"set", "root", "acceptance", `[]`}, "root", func(n *tree.Node) {}, nil},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			root := repo(t)
			before := gittest.Run(t, root, "rev-parse", "HEAD")
			want := start()
			if n, _ := tree.Find(want, c.id); n != nil {
				c.change(n)
			}
			code, stdout, stderr := run(t, root, c.args...)
			if c.body == nil { // nothing changes
				if code != 1 || stderr != "tree-edit: node "+c.id+" already is as asked: nothing to commit\n" || stdout != "" {
					t.Fatalf("exit %d, %q %q", code, stdout, stderr)
				}
				if gittest.Run(t, root, "rev-parse", "HEAD") != before {
					t.Fatal("a refused edit committed")
				}
				return
			}
			msg := "chore(loop): operator " + c.args[0] + " node " + c.id
			if code != 0 || stderr != "" || !regexp.MustCompile(`^commit=[0-9a-f]{40} `+regexp.QuoteMeta(msg)+"\n$").MatchString(stdout) {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			if got := load(t, root); !tree.Equal(got, want) {
				t.Fatalf("tree after the edit:\n%s\nwant:\n%s", tree.Encode(got), tree.Encode(want))
			}
			head := gittest.Run(t, root, "rev-parse", "HEAD")
			if stdout != "commit="+head+" "+msg+"\n" || gittest.Run(t, root, "rev-parse", "HEAD^") != before {
				t.Fatalf("stdout %q, HEAD %s", stdout, head)
			}
			if got, want := gittest.Run(t, root, "log", "-1", "--format=%B"), msg+"\n\n"+strings.Join(c.body, "\n"); got != want {
				t.Errorf("commit message:\n%s\nwant:\n%s", got, want)
			}
			if files := gittest.Run(t, root, "show", "--name-only", "--format=", "HEAD"); files != layout.Tree {
				t.Errorf("the commit holds %q", files)
			}
		})
	}
}

// TestRefusals: each refusal with its exit code and one line; none
// writes the tree or commits.
func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		name    string
		prepare func(t *testing.T, root string)
		args    []string
		code    int
		stderr  string
	}{
		{"passed, decompose", nil, []string{"decompose", "done"}, 1, "tree-edit: node done has passed: passed nodes are immutable\n"},
		{"passed, set", nil, []string{"set", "done", "title", "x"}, 1, "tree-edit: node done has passed: passed nodes are immutable\n"},
		{"no node", nil, []string{"decompose", "nosuch"}, 1, "tree-edit: no node nosuch in .runner/state/tree.json\n"},
		{"bad id", nil, []string{"retry", "a b"}, 80, "tree-edit: \"a b\" is not a node id\n"},
		{"negative attempts", nil, []string{"retry", "stuck", "--attempts=-1"}, 80, "tree-edit: --attempts must be 1 or more, got -1\n"},
		{"children", nil, []string{"decompose", "parent"}, 1, "tree-edit: node parent has children: only a leaf is decomposed\n"},
		{"acceptance not JSON", nil, []string{"set", "tried", "acceptance", "x"}, 80, "tree-edit: acceptance takes a JSON array of strings, e.g. '[\"tests pass\"]'\n"},
		{"acceptance null", nil, []string{"set", "tried", "acceptance", "null"}, 80, "tree-edit: acceptance takes a JSON array of strings, e.g. '[\"tests pass\"]'\n"},
		{"acceptance numbers", nil, []string{"set", "tried", "acceptance", "[1]"}, 80, "tree-edit: acceptance takes a JSON array of strings, e.g. '[\"tests pass\"]'\n"},
		{"empty title", nil, []string{"set", "tried", "title", ""}, 1, ""},
		{"main", func(t *testing.T, root string) { gittest.Run(t, root, "checkout", "-q", "-b", "main") },
			[]string{"retry", "stuck"}, 1, "tree-edit: on \"main\", not a run branch: check out runner/<run-id> (runner-start) before editing its tree\n"},
		{"master", func(t *testing.T, root string) { gittest.Run(t, root, "checkout", "-q", "-b", "master") },
			[]string{"retry", "stuck"}, 1, "tree-edit: on \"master\", not a run branch: check out runner/<run-id> (runner-start) before editing its tree\n"},
		{"detached", func(t *testing.T, root string) { gittest.Run(t, root, "checkout", "-q", "--detach") },
			[]string{"retry", "stuck"}, 1, "tree-edit: on \"\", not a run branch: check out runner/<run-id> (runner-start) before editing its tree\n"},
		{"uncommitted", func(t *testing.T, root string) { appendTree(t, root, "\n") },
			[]string{"retry", "stuck"}, 1, "tree-edit: .runner/state/tree.json has uncommitted changes: commit or discard them first\n"},
		{"invalid", func(t *testing.T, root string) {
			if err := os.WriteFile(filepath.Join(root, layout.Tree), []byte(`{"id": "root"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			gittest.Run(t, root, "commit", "-q", "-am", "broken")
		}, []string{"retry", "stuck"}, 1, ""},
		{"not a repository", func(t *testing.T, root string) {
			if err := os.RemoveAll(filepath.Join(root, ".git")); err != nil {
				t.Fatal(err)
			}
		}, []string{"retry", "stuck"}, 1, ""},
		{"no .runner", func(t *testing.T, root string) {
			if err := os.RemoveAll(filepath.Join(root, layout.Runner)); err != nil {
				t.Fatal(err)
			}
		}, []string{"retry", "stuck"}, 1, ""},
		{"locked", func(t *testing.T, root string) {
			p := filepath.Join(root, layout.Lock)
			if err := os.WriteFile(p, []byte("pid=1 command=runner-loop\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			// flock is per open file: this one holds it, tree-edit's own
			// open file cannot take it.
			if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
		}, []string{"retry", "stuck"}, 1, "tree-edit: a runner holds .runner/lock (pid=1 command=runner-loop): stop it (or wait for it) before editing the tree\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := repo(t)
			if c.prepare != nil {
				c.prepare(t, root)
			}
			data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
			head, _ := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
			code, stdout, stderr := run(t, root, c.args...)
			if code != c.code || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "tree-edit: ") || c.stderr != "" && stderr != c.stderr {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d, %q", code, stdout, stderr, c.code, c.stderr)
			}
			after, _ := os.ReadFile(filepath.Join(root, layout.Tree))
			if !bytes.Equal(after, data) {
				t.Error("a refused edit changed tree.json")
			}
			if now, _ := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); !bytes.Equal(now, head) {
				t.Error("a refused edit committed")
			}
		})
	}
}

func appendTree(t *testing.T, root, s string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, layout.Tree), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestCommitRefused: a commit the hook refuses leaves the committed tree
// in place; the hook sees TREELOOP_COMMIT=operator.
func TestCommitRefused(t *testing.T) {
	root := repo(t)
	seen := filepath.Join(root, "hook.env")
	hook := "#!/bin/sh\necho \"$TREELOOP_COMMIT\" > " + seen + "\nexit 1\n"
	if err := os.WriteFile(filepath.Join(root, ".git", "hooks", "pre-commit"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(root, layout.Tree))
	code, stdout, stderr := run(t, root, "retry", "stuck")
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "tree-edit: commit: ") || !strings.HasSuffix(stderr, " (the tree is unchanged)\n") {
		t.Fatalf("exit %d, %q %q", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(root, layout.Tree)); !bytes.Equal(after, data) {
		t.Error("the tree was left edited")
	}
	if env, err := os.ReadFile(seen); err != nil || string(env) != Operator+"\n" {
		t.Errorf("the hook saw TREELOOP_COMMIT=%q (%v)", env, err)
	}
}
