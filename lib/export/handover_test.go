package export

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// handoverRun is a run of five leaves, each a rule of the hand-over:
//
//	w     "Add max_length to slug.py": slug.py and its test, witnessed;
//	docs  "Document it in docs/usage.md": docs only, suite (the operator's);
//	check "Check the build": changes nothing, suite; passes all the same;
//	tests "tests": a leaf titled tests whose commit holds the fix too, and
//	      which carries x.py from a failed iteration of leaf x (open);
//	      the operator answered its question.
type handoverRun struct {
	*runRepo
	root  *tree.Node
	iters map[string]string // loop commit by node id
}

func newHandoverRun(t *testing.T) *handoverRun {
	r := &handoverRun{runRepo: newRunRepo(t), iters: map[string]string{}}
	order := int64(0)
	leaf := func(id, title, goal string, evidence string) *tree.Node {
		order++
		return &tree.Node{ID: id, Order: order, Title: title, Goal: goal, Acceptance: []string{}, Next: tree.NextExecute, MaxAttempts: 3, Evidence: evidence, Children: []*tree.Node{}}
	}
	r.root = &tree.Node{ID: "root", Title: "Slugs", Goal: "Better slugs.", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3, Children: []*tree.Node{}}
	for _, n := range []*tree.Node{
		leaf("w", "Add max_length to slug.py", "slug(text, max_length) cuts at max_length.", ""),
		leaf("docs", "Document it", "Describe max_length in docs/usage.md.", tree.EvidenceSuite),
		leaf("check", "Check the build", "Nothing to write if the build is green.", tree.EvidenceSuite),
		leaf("tests", "tests", "Write tests for `cli.py` in tests/test_cli.py.", ""),
		leaf("x", "Extra", "Something else.", ""),
	} {
		r.root.Children = append(r.root.Children, n)
	}
	r.write("slug.py", "def slug(t): return t\n")
	r.write("cli.py", "print(1)\n")
	r.commit("base files")
	r.git("branch", "-f", "main")
	r.save()
	r.commit("chore(loop): start run r1")
	r.pass("w", 1, map[string]string{"slug.py": "def slug(t, max_length=0): return t[:max_length or None]\n", "tests/test_slug.py": "def test_max(): pass\n"},
		"Treeloop-Evidence: witness; 3 passed, 2 of 2 passed before\nTreeloop-Witness: tests.test_slug::test_max")
	r.pass("docs", 2, map[string]string{"docs/usage.md": "max_length\n"}, "Treeloop-Evidence: suite; 3 passed, 3 of 3 passed before")
	r.pass("check", 3, nil, "Treeloop-Evidence: suite; 3 passed, 1 skipped, 3 of 3 passed before")
	r.write("x.py", "x\n")
	r.commit("chore(loop): run r1 iter 4 node x status=done guard=fail")
	n, _ := tree.Find(r.root, "tests")
	n.Answers = []tree.Answer{{Question: "Test the CLI through main()?", Answer: "Yes: call main() with argv."}}
	r.save()
	r.commit("chore(loop): operator answer node tests")
	r.pass("tests", 5, map[string]string{"tests/test_cli.py": "def test_cli(): pass\n", "cli.py": "print(2)\n"},
		"Treeloop-Evidence: witness; 4 passed, 3 of 3 passed before\nTreeloop-Witness: tests.test_cli::test_cli")
	r.write(".runner/state/assumptions.md", "# Assumptions\n\nThe agent may append assumptions here; the runner keeps them.\n- Slugs are ASCII.\n")
	r.commit("chore(loop): run r1 iter 6 node x status=retry guard=skipped")
	return r
}

// save writes the tree.
func (r *handoverRun) save() {
	r.write(".runner/state/tree.json", string(tree.Encode(r.root)))
}

// pass commits iteration iter of node id with files written and the
// node passed, the trailers in the message.
func (r *handoverRun) pass(id string, iter int, files map[string]string, trailers string) {
	for name, data := range files {
		r.write(name, data)
	}
	n, _ := tree.Find(r.root, id)
	n.Passes = true
	r.save()
	r.iters[id] = r.commit(strings.Join([]string{"chore(loop): run r1 iter " + strconv.Itoa(iter) + " node " + id + " status=done guard=pass", "done", trailers}, "\n\n"))
}

// log writes the iteration log of node id's pass under runDir: meta.json
// naming its commit and guard.json with the evidence.
func (r *handoverRun) log(t *testing.T, runDir, id string, iter int, ev *iterdir.Evidence) {
	t.Helper()
	dir := filepath.Join(runDir, layout.IterName(iter))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g := iterdir.Guard{Argv: []string{"pytest", "-q"}, Outcome: "pass", DurationMS: 1200, Evidence: ev}
	m := iterdir.Meta{Version: 1, RunID: "r1", Iteration: iter, NodeID: id, Mode: "execute", Status: "done", Result: "passed", Guard: "pass", Commit: r.iters[id], GuardRun: &g}
	for name, v := range map[string]any{iterdir.MetaFile: m, iterdir.GuardFile: g} {
		data, err := jsondoc.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *handoverRun) body(t *testing.T, runDir string) string {
	t.Helper()
	p, err := NewPlan(r.repo, "r1")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Build(r.repo, p, Options{Branch: "out"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadBody(r.repo, p, res, runDir)
	if err != nil {
		t.Fatal(err)
	}
	return b.Markdown()
}

func wantLines(t *testing.T, md string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(md, "\n"+l+"\n") {
			t.Errorf("no line %q in the body:\n%s", l, md)
		}
	}
}

// With the iteration logs: the counts, levels and witnesses from
// guard.json; a leaf that changed nothing is marked so in the tree and
// its changes; each commit's files, tests marked, the files a leaf did
// not name, the file another iteration changed; the operator's answer
// and the assumptions.
func TestBodyHandOverFromLogs(t *testing.T) {
	r := newHandoverRun(t)
	runDir := t.TempDir()
	r.log(t, runDir, "w", 1, &iterdir.Evidence{Level: "witness", Held: true, Passed: 3, PassToPass: 2, Witness: &iterdir.Witness{Tests: []string{"tests.test_slug::test_max"}}})
	r.log(t, runDir, "docs", 2, &iterdir.Evidence{Level: "suite", LevelFrom: "node", Held: true, Passed: 3, PassToPass: 3})
	r.log(t, runDir, "check", 3, &iterdir.Evidence{Level: "suite", LevelFrom: "node", Held: true, Passed: 3, Skipped: 1, PassToPass: 3})
	r.log(t, runDir, "tests", 5, &iterdir.Evidence{Level: "witness", Held: true, Passed: 4, PassToPass: 3, Witness: &iterdir.Witness{Tests: []string{"tests.test_cli::test_cli"}}})
	md := r.body(t, runDir)
	wantLines(t, md,
		"Made by treeloop run `r1` (branch `runner/r1`): 3 commits, 4 leaves of the task tree passed by the guard, 1 of them with no code change.",
		"  - [x] Add max_length to slug.py (`w`): passed, witnessed",
		"  - [x] Document it (`docs`): passed, suite only (the operator's choice)",
		"  - [x] Check the build (`check`): passed, suite only (the operator's choice), no code change",
		"  - [ ] Extra (`x`): open (attempts 0/3)",
		"| `w` Add max_length to slug.py | 1 | "+short(r.iters["w"])+" | `pytest -q`: pass | 0 | 1.2s | 3 passed, 0 failed, 0 skipped; 2 of 2 that passed before passed again | witnessed by `tests.test_slug::test_max` |",
		"| `check` Check the build | 3 | "+short(r.iters["check"])+" | `pytest -q`: pass | 0 | 1.2s | 3 passed, 0 failed, 1 skipped; 3 of 3 that passed before passed again | suite only (the operator's choice) |",
		// Each leaf's files: the tests marked; the witnessed leaf names slug.py.
		"  - `slug.py` modified",
		"  - `tests/test_slug.py` added, *test*",
		"- `docs` Document it: commit "+short(r.commitOf(t, "docs"))+", 1 file, no test file",
		"- `check` Check the build: no code change (its iterations changed nothing outside `.runner/`); no commit",
		// The leaf titled tests holds the fix: visible, and not named by it.
		"- `tests` tests: commit "+short(r.commitOf(t, "tests"))+", 3 files, test and other files",
		"  - `cli.py` modified",
		"  - `tests/test_cli.py` added, *test*",
		"  - `x.py` added, *not named by the leaf* (it names `cli.py`, `tests/test_cli.py`), changed by iteration 4 (node x), not by this leaf's iterations",
		"- Slugs are ASCII.",
		"- tests (`tests`) asked:",
		"  > Test the CLI through main()?",
		"  The operator answered:",
		"  > Yes: call main() with argv.",
	)
	if strings.Contains(md, "trailers") {
		t.Errorf("the logs are here, yet the body cites the trailers:\n%s", md)
	}
}

// Without the logs (a clone): the evidence comes from the loop commits'
// trailers, worded the same; the guard's command and time are unknown.
func TestBodyHandOverFromTrailers(t *testing.T) {
	r := newHandoverRun(t)
	md := r.body(t, filepath.Join(t.TempDir(), "none"))
	wantLines(t, md,
		"  - [x] Add max_length to slug.py (`w`): passed, witnessed",
		"  - [x] Check the build (`check`): passed, suite only (the operator's choice), no code change",
		"| `w` Add max_length to slug.py | 1 | "+short(r.iters["w"])+" | pass | — | — | 3 passed, 0 failed, 0 skipped; 2 of 2 that passed before passed again | witnessed by `tests.test_slug::test_max` |",
		"| `check` Check the build | 3 | "+short(r.iters["check"])+" | pass | — | — | 3 passed, 0 failed, 1 skipped; 3 of 3 that passed before passed again | suite only (the operator's choice) |",
		"The guard logs of 4 nodes are not in this checkout (.runner/iterations/r1/): their evidence is what their loop commits' trailers (`Treeloop-Evidence`, `Treeloop-Witness`) record.",
	)
}

// A pass whose guard reported no tests by name (no trailer, no
// evidence in its log) says so: never "witnessed", never "suite".
func TestBodyNoTestsByName(t *testing.T) {
	r := newRunRepo(t)
	r.tree()
	r.commit("chore(loop): start run r1")
	r.write("a.txt", "a\n")
	r.tree("a")
	r.commit("chore(loop): run r1 iter 1 node a status=done guard=pass")
	p, err := NewPlan(r.repo, "r1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadBody(r.repo, p, Result{}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	md := b.Markdown()
	wantLines(t, md, "  - [x] Leaf a (`a`): passed, exit status only (no tests by name)")
	if !strings.Contains(md, "| — | exit status only (no tests by name) |") {
		t.Errorf("the evidence row:\n%s", md)
	}
}

// The scope rule: a leaf that names no file states no scope, so none of
// its files is marked; a leaf names a file by its path, its name, or its
// directory with a slash, in words or in backticks.
func TestNamedFiles(t *testing.T) {
	known := newFileNames()
	for _, p := range []string{"src/cli/main.py", "docs/usage.md", "justfile", "Node"} {
		known.add(p)
	}
	for text, want := range map[string]string{
		"Fix the bug.":                             "",
		"Edit main.py and docs/usage.md.":          "main.py docs/usage.md",
		"Everything under src/cli/, e.g. the CLI.": "src/cli/",
		"Add a recipe to the `justfile`":           "justfile",
		"Node.js 20 and the justfile":              "",
		"See cli/main.py":                          "cli/main.py",
	} {
		if got := strings.Join(named(text, known), " "); got != want {
			t.Errorf("%q names %q, want %q", text, got, want)
		}
	}
	if !namedIn([]string{"src/cli/"}, "src/cli/main.py") || namedIn([]string{"main.py"}, "docs/usage.md") {
		t.Error("namedIn")
	}
}

// A code span holds any text: backticks in it get a longer fence.
func TestCode1(t *testing.T) {
	for in, want := range map[string]string{
		"a.py":         "`a.py`",
		"a`b":          "```a`b```",
		"`x`":          "``` `x` ```",
		"two\n  lines": "`two lines`",
	} {
		if got := code1(in); got != want {
			t.Errorf("code1(%q) = %q, want %q", in, got, want)
		}
	}
}

// commitOf is the exported commit of node id on branch out.
func (r *handoverRun) commitOf(t *testing.T, id string) string {
	t.Helper()
	for _, l := range strings.Split(r.git("log", "--format=%H %(trailers:key=Treeloop-Node,valueonly,separator=%x20)", "out"), "\n") {
		if sha, node, _ := strings.Cut(l, " "); strings.TrimSpace(node) == id {
			return sha
		}
	}
	t.Fatalf("no commit of %s on out", id)
	return ""
}
