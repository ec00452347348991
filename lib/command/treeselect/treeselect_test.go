package treeselect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// leaf is an execute leaf with attempts of max tries.
func leaf(id string, order int64, passes bool, attempts, max int) *tree.Node {
	return &tree.Node{ID: id, Order: order, Title: "T " + id, Goal: "g", Acceptance: []string{}, Next: tree.NextExecute,
		Passes: passes, Attempts: attempts, MaxAttempts: max, Children: []*tree.Node{}}
}

// root is an inner node over children; it passes when they all do.
func root(children ...*tree.Node) *tree.Node {
	r := leaf("root", 0, true, 0, 3)
	r.Next, r.Children = tree.NextDecompose, children
	for _, c := range children {
		r.Passes = r.Passes && c.Passes
	}
	return r
}

// selectIn runs tree-select in a directory holding tree as the run's tree.
func selectIn(t *testing.T, r *tree.Node, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, layout.Tree)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, tree.Encode(r), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// The exit code says what the selection found: open (0), complete (2),
// stuck (3, naming the leaf and the operator's next step), waiting (7).
func TestExitCodeBySelection(t *testing.T) {
	waiting := leaf("w", 1, false, 0, 3)
	waiting.Waiting = "Which store?"
	tests := []struct {
		name   string
		tree   *tree.Node
		code   int
		stdout string
		stderr string
	}{
		{"open", root(leaf("a", 1, true, 0, 3), leaf("b", 2, false, 1, 3)), exit.OK, "status=open id=b path=root/b next=execute attempts=1/3\n", ""},
		{"complete", root(leaf("a", 1, true, 0, 3)), exit.Complete, "status=complete\n", ""},
		{"stuck", root(leaf("a", 1, false, 3, 3), leaf("b", 2, false, 0, 3)), exit.Stuck, "status=stuck id=a path=root/a next=execute attempts=3/3\n", "stuck: node 'a' at root/a has no attempts left (3/3)"},
		{"waiting", root(waiting), exit.Waiting, "", "waiting: every open leaf waits for an operator's answer, the leftmost 'w'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := selectIn(t, tt.tree)
			if code != tt.code {
				t.Fatalf("exit %d, want %d (stdout %q, stderr %q)", code, tt.code, out, errs)
			}
			if tt.stdout != "" && out != tt.stdout {
				t.Errorf("stdout %q, want %q", out, tt.stdout)
			}
			if !strings.Contains(errs, tt.stderr) || (tt.stderr == "") != (errs == "") {
				t.Errorf("stderr %q, want it to hold %q", errs, tt.stderr)
			}
		})
	}
}

// A stuck selection prints its JSON too; a complete tree's --get of a
// field only an open selection has prints nothing and keeps the exit code.
func TestJSONAndGet(t *testing.T) {
	code, out, _ := selectIn(t, root(leaf("a", 1, false, 3, 3)), "--json")
	if code != exit.Stuck || !strings.Contains(out, `"status": "stuck"`) || !strings.Contains(out, `"id": "a"`) {
		t.Fatalf("stuck --json: exit %d %q", code, out)
	}
	code, out, errs := selectIn(t, root(leaf("a", 1, true, 0, 3)), "--get", "id")
	if code != exit.Complete || out != "" {
		t.Fatalf("complete --get id: exit %d stdout %q stderr %q", code, out, errs)
	}
	code, out, _ = selectIn(t, root(leaf("a", 1, false, 0, 3)), "--get", "id")
	if code != exit.OK || out != "a\n" {
		t.Fatalf("open --get id: exit %d %q", code, out)
	}
}

// An invalid tree is a negative answer (exit 1) that counts its errors and
// points at tree-validate; an unreadable one is a runner error.
func TestInvalidAndMissingTree(t *testing.T) {
	var out, errb bytes.Buffer
	code := Main([]string{"-"}, strings.NewReader(`{"id":"root"}`), &out, &errb)
	if code != exit.Negative || !strings.Contains(errb.String(), "<stdin> is invalid (") || !strings.Contains(errb.String(), "run tree-validate for all of them") {
		t.Fatalf("invalid tree: exit %d %q", code, errb.String())
	}
	errb.Reset()
	code = Main([]string{"-C", t.TempDir()}, strings.NewReader(""), &out, &errb)
	if code != exit.RunnerError || !strings.Contains(errb.String(), "read "+layout.Tree) {
		t.Fatalf("no tree: exit %d %q", code, errb.String())
	}
}

// Under stuck_policy skip (the flag, or config.toml's) a leaf with no
// attempts left is passed over and the next leaf is selected; once only
// stuck leaves are left the selection is stuck and the message names
// every one. An unknown policy is a usage error, an unreadable config.toml
// a runner error that names it.
func TestStuckPolicy(t *testing.T) {
	firstStuck := root(leaf("a", 1, false, 3, 3), leaf("b", 2, false, 0, 3))
	for _, c := range []struct {
		name, config string
		args         []string
		code         int
		stdout       string
	}{
		{"default stop", "", nil, exit.Stuck, "status=stuck id=a path=root/a next=execute attempts=3/3\n"},
		{"skip by flag", "", []string{"--stuck-policy", "skip"}, exit.OK, "status=open id=b path=root/b next=execute attempts=0/3\n"},
		{"skip by config", `stuck_policy = "skip"`, nil, exit.OK, "status=open id=b path=root/b next=execute attempts=0/3\n"},
		{"decompose selects as stop", `stuck_policy = "decompose"`, nil, exit.Stuck, "status=stuck id=a path=root/a next=execute attempts=3/3\n"},
		{"the flag wins", `stuck_policy = "skip"`, []string{"--stuck-policy", "stop"}, exit.Stuck, "status=stuck id=a path=root/a next=execute attempts=3/3\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := selectWithConfig(t, firstStuck, c.config, c.args...)
			if code != c.code || out != c.stdout {
				t.Errorf("exit %d %q (stderr %q), want %d %q", code, out, errs, c.code, c.stdout)
			}
		})
	}

	allStuck := root(leaf("a", 1, false, 3, 3), leaf("b", 2, true, 0, 3), leaf("c", 3, false, 2, 2))
	code, out, errs := selectWithConfig(t, allStuck, "", "--stuck-policy", "skip")
	want := "tree-select: stuck: no leaf is left to work but 2 stuck leaves: 'a' at root/a (3/3), 'c' at root/c (2/2): give it more with tree-edit retry ID [--attempts N], or split it with tree-edit decompose ID\n"
	if code != exit.Stuck || out != "status=stuck id=a path=root/a next=execute attempts=3/3\n" || errs != want {
		t.Errorf("only stuck leaves left: exit %d %q %q", code, out, errs)
	}

	if code, _, errs := selectWithConfig(t, firstStuck, "", "--stuck-policy", "later"); code != exit.Usage || !strings.Contains(errs, `--stuck-policy must be stop, skip or decompose, got "later"`) {
		t.Errorf("unknown policy: exit %d %q", code, errs)
	}
	if code, _, errs := selectWithConfig(t, firstStuck, `stuck_policy = "later"`); code != exit.RunnerError || !strings.Contains(errs, "config.toml: stuck_policy: must be one of stop, skip, decompose") {
		t.Errorf("bad config: exit %d %q", code, errs)
	}
}

// selectWithConfig is selectIn with config.toml holding config ("" for
// none).
func selectWithConfig(t *testing.T, r *tree.Node, config string, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string][]byte{layout.Tree: tree.Encode(r), layout.Config: []byte(config + "\n")} {
		if name == layout.Config && config == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}
