package cli

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/posener/complete"

	"github.com/treeloop/treeloop/lib/layout"
)

// The directory a completion reads is the last -C or --chdir on the line
// before the word being typed, else TREELOOP_DIR, else ".".
func TestCompletionRoot(t *testing.T) {
	for _, c := range []struct{ env, line, want string }{
		{"", "", "."},
		{"/env", "", "/env"},
		{"", "tool open --node ", "."},
		{"/env", "tool open --node ", "/env"},
		{"", "tool -C /a open --node ", "/a"},
		{"", "tool -C /a open --node n", "/a"},
		{"", "tool --chdir /b open ", "/b"},
		{"", "tool --chdir=/c open ", "/c"},
		{"", "tool -C /a --chdir=/c -C /d open ", "/d"},
		{"/env", "tool -C /a", "/env"}, // the directory being typed
		{"/env", "tool -C ", "/env"},
		{"", "tool --chdir=", "."},
		{"", "tool --chdir= ", "."},
	} {
		t.Setenv("TREELOOP_DIR", c.env)
		t.Setenv("COMP_LINE", c.line)
		if got := completionRoot(complete.Args{}); got != c.want {
			t.Errorf("TREELOOP_DIR=%q COMP_LINE=%q: %q, want %q", c.env, c.line, got, c.want)
		}
	}
}

// write writes data to rel (slash-separated) under dir.
func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// node is one node of a tree.json with the given children.
func node(id, order, children string) string {
	return `{"id": "` + id + `", "order": ` + order + `, "title": "Task ` + id + `", "goal": "", "acceptance": [],
		"next": "execute", "passes": false, "attempts": 0, "max_attempts": 3, "children": [` + children + `]}`
}

// The node ids come from the -C directory's tree, depth first; no tree,
// or one that is not valid, offers nothing.
func TestPredictNodes(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TREELOOP_DIR", "")
	t.Setenv("COMP_LINE", "tree-edit -C "+dir+" retry ")
	if got := predictNodes.Predict(complete.Args{}); got != nil {
		t.Errorf("no tree: %q", got)
	}
	write(t, dir, layout.Tree, node("root", "0", node("a", "0", node("a1", "0", ""))+","+node("b", "1", "")))
	if got, want := predictNodes.Predict(complete.Args{}), []string{"root", "a", "a1", "b"}; !slices.Equal(got, want) {
		t.Errorf("a tree: %q, want %q", got, want)
	}
	write(t, dir, layout.Tree, node("root", "0", node("a", "0", "")+","+node("a", "1", "")))
	if got := predictNodes.Predict(complete.Args{}); got != nil {
		t.Errorf("a tree with a duplicate id: %q", got)
	}
}

// The run ids are the current run's, those with iteration directories or
// run records (a later record, <run>.2.json, naming its run) and those of
// the run worktrees, each once, sorted; nothing is no ids.
func TestPredictRuns(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TREELOOP_DIR", dir)
	t.Setenv("COMP_LINE", "runner-status --run ")
	if got := predictRuns.Predict(complete.Args{}); len(got) != 0 {
		t.Errorf("no runs: %q", got)
	}
	write(t, dir, layout.RunState, `{"run_id": "r-state"}`)
	write(t, dir, layout.Iterations+"/r-iter/0001/x", "")
	write(t, dir, layout.Iterations+"/r-iter-only/0001/x", "")
	write(t, dir, layout.Iterations+"/not-a-dir", "")
	write(t, dir, layout.Iterations+"/.hidden/x", "") // not an id
	for _, name := range []string{"r-rec.json", "r-later.2.json", "r-both.json", "r-both.3.json", "r.x.json", "r-dot..json", "notes.txt"} {
		write(t, dir, layout.Runs+"/"+name, "{}")
	}
	write(t, dir, layout.Worktrees+"/r-tree/x", "")
	write(t, dir, layout.Worktrees+"/r-iter/x", "")
	want := []string{"r-both", "r-dot.", "r-iter", "r-iter-only", "r-later", "r-rec", "r-state", "r-tree", "r.x"}
	if got := predictRuns.Predict(complete.Args{}); !slices.Equal(got, want) {
		t.Errorf("runs: %q, want %q", got, want)
	}
	for _, state := range []string{`{"run_id": null}`, `{}`, `not json`} {
		write(t, dir, layout.RunState, state)
		if got := predictRuns.Predict(complete.Args{}); slices.Contains(got, "r-state") || len(got) != len(want)-1 {
			t.Errorf("run state %s: %q", state, got)
		}
	}
}

type completed struct {
	Chdir
	Retry retryCmd `cmd:"" help:"Retry a node."`
}

type retryCmd struct {
	Node string `arg:"" predictor:"node" help:"The node."`
	ran  bool
}

func (c *retryCmd) Run(*Env) error {
	c.ran = true
	return nil
}

// With COMP_LINE set (bash's complete -C), the command prints the
// candidates for the word being typed and exits 0 without running,
// whatever its arguments.
func TestRunCompletes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, layout.Tree, node("root", "0", node("a", "0", "")+","+node("b", "1", "")))
	t.Setenv("TREELOOP_DIR", "")
	for _, c := range []struct {
		line string
		args []string
		want string
	}{
		{"tool re", []string{"tool", "re", "tool"}, "retry\n"},
		{"tool -C " + dir + " retry ", []string{"tool", "", "retry"}, "root\na\nb\n"},
		{"tool -C " + dir + " retry r", []string{"retry", "root"}, "root\n"},
	} {
		t.Setenv("COMP_LINE", c.line)
		t.Setenv("COMP_POINT", "")
		cmd := &completed{}
		code, stdout, stderr := run(cmd, c.args...)
		if code != 0 || stdout != c.want || stderr != "" || cmd.Retry.ran {
			t.Errorf("COMP_LINE=%q: exit %d, stdout %q, stderr %q, ran %v; want %q", c.line, code, stdout, stderr, cmd.Retry.ran, c.want)
		}
	}
}
