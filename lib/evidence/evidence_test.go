package evidence

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/testresults"
	"github.com/treeloop/treeloop/lib/tree"
)

func results(tests map[string]testresults.Status) testresults.Results {
	var r testresults.Results
	for n, st := range tests {
		r.Add(n, st, "")
	}
	return r
}

// TestLevel: the node's own evidence wins, then suite_nodes, then
// [guard] evidence; each says who decided.
func TestLevel(t *testing.T) {
	g := config.Default().Guard
	g.SuiteNodes = []string{"docs-*"}
	for _, c := range []struct {
		n           *tree.Node
		level, from string
	}{
		{&tree.Node{ID: "a", Evidence: tree.EvidenceProposedSuite}, tree.EvidenceProposedSuite, FromNode},
		{&tree.Node{ID: "docs-1", Evidence: tree.EvidenceWitness}, tree.EvidenceWitness, FromNode},
		{&tree.Node{ID: "docs-1"}, tree.EvidenceSuite, FromSuiteNodes},
		{&tree.Node{ID: "code"}, tree.EvidenceWitness, FromConfig},
		{nil, tree.EvidenceWitness, FromConfig},
	} {
		if level, from := Level(c.n, g); level != c.level || from != c.from {
			t.Errorf("%+v: %s from %s, want %s from %s", c.n, level, from, c.level, c.from)
		}
	}
	g.Evidence = tree.EvidenceSuite
	if level, from := Level(&tree.Node{ID: "x"}, g); level != tree.EvidenceSuite || from != FromConfig {
		t.Errorf("config suite: %s from %s", level, from)
	}
	if Describe(tree.EvidenceWitness) == Describe(tree.EvidenceSuite) || Describe(tree.EvidenceSuite) == Describe(tree.EvidenceProposedSuite) {
		t.Error("a weaker pass reads the same as a stronger one")
	}
}

// TestJudge: no tests, a failing or erroring test, a test of before that
// did not pass (missing, skipped) each fail with their own words; a full
// pass holds and counts.
func TestJudge(t *testing.T) {
	before := []string{"a", "b"}
	for _, c := range []struct {
		name  string
		tests map[string]testresults.Status
		want  string
	}{
		{"none", nil, "reported no tests by name"},
		{"failing", map[string]testresults.Status{"a": testresults.Passed, "b": testresults.Passed, "c": testresults.Failed}, "report failures (c)"},
		{"error", map[string]testresults.Status{"a": testresults.Passed, "b": testresults.Passed, "pkg": testresults.Error}, "report failures (pkg)"},
		{"missing", map[string]testresults.Status{"a": testresults.Passed}, "did not pass now (b)"},
		{"skipped", map[string]testresults.Status{"a": testresults.Passed, "b": testresults.Skipped}, "did not pass now (b)"},
		{"held", map[string]testresults.Status{"a": testresults.Passed, "b": testresults.Passed, "c": testresults.Passed, "d": testresults.Skipped}, ""},
	} {
		var ev iterdir.Evidence
		msg := Judge(&ev, results(c.tests), before)
		if c.want == "" && msg != "" || c.want != "" && !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q, want %q", c.name, msg, c.want)
		}
		if c.name == "held" && (ev.Passed != 3 || ev.Skipped != 1 || ev.PassToPass != 2 || len(ev.Missing) != 0 || !slices.Equal(ev.PassedNames, []string{"a", "b", "c"})) {
			t.Errorf("held: %+v", ev)
		}
	}
}

// TestTestFiles: the globs cross directories with **, and the runner's
// files are never test files.
func TestTestFiles(t *testing.T) {
	got := TestFiles([]string{"calc.go", "calc_test.go", "pkg/x/y_test.go", "tests/test_a.py", "src/a.py", "src/b.test.ts", "web/__tests__/c.js", ".runner/state/x_test.go", "tests/cli.rs"}, config.DefaultTestFiles)
	want := []string{"calc_test.go", "pkg/x/y_test.go", "tests/test_a.py", "src/b.test.ts", "web/__tests__/c.js", "tests/cli.rs"}
	if !slices.Equal(got, want) {
		t.Errorf("TestFiles = %q, want %q", got, want)
	}
}

// TestWitnesses: a witness passes in the guard, failed or could not run
// on the base code, and belongs to the node's test files. A test the base
// run did not report counts only when its package or file is reported
// broken there, or when the run reported nothing and failed.
func TestWitnesses(t *testing.T) {
	p, f, e, s := testresults.Passed, testresults.Failed, testresults.Error, testresults.Skipped
	guard := results(map[string]testresults.Status{
		"new": p, "fixed": p, "old": p, "flaky": f, "foreign": p, "skipped": p, "unrun": p,
		"ex/pkg.TestNew": p, "tests.test_x::test_y": p, "tests.test_x.TestC::test_z": p, "web/a.test.js::adds": p,
	})
	base := results(map[string]testresults.Status{"fixed": f, "old": p, "flaky": f, "foreign": e, "skipped": s, "new": e,
		"ex/pkg": e, "tests.test_x": e, "web/a.test.js::web/a.test.js": f})
	owner := func(n string) bool { return n != "foreign" }
	want := []string{"ex/pkg.TestNew", "fixed", "new", "tests.test_x.TestC::test_z", "tests.test_x::test_y", "web/a.test.js::adds"}
	if got := Witnesses(guard, base, 1, nil, owner); !slices.Equal(got, want) {
		t.Errorf("Witnesses = %q, want %q", got, want)
	}
	if got := Witnesses(guard, testresults.Results{}, 1, nil, owner); len(got) != 9 {
		t.Errorf("a base run that reported nothing and failed: %q", got)
	}
	if got := Witnesses(guard, testresults.Results{}, 0, nil, owner); len(got) != 0 {
		t.Errorf("a base run that reported nothing and passed: %q", got)
	}
	// A test that passed at the run's best witnesses nothing, however it
	// fared in the scratch.
	if got := Witnesses(guard, base, 1, []string{"fixed", "new"}, owner); slices.Contains(got, "fixed") || slices.Contains(got, "new") || len(got) != len(want)-2 {
		t.Errorf("tests that passed before: %q", got)
	}
}

// TestOwner: Go tests by the functions (and suite methods) the files of
// their package's directory declare (not the old tests of the package, nor
// a test of the same name in another package), pytest tests by module,
// others by path prefix, and anything else only when it is new.
func TestOwner(t *testing.T) {
	files := map[string]string{
		"go.mod":              "module example.com/calc\n\ngo 1.22\n",
		"mul_test.go":         "package calc\n\nfunc TestMul(t *testing.T) {}\n\nfunc helper() {}\nfunc ExampleMul() {}\n",
		"sub/suite_test.go":   "package sub\n\nfunc (s *Suite) TestNew() {}\n",
		"svc/go.mod":          "module example.com/svc\n",
		"svc/api/api_test.go": "package api\n\nfunc TestAPI(t *testing.T) {}\n",
		"tests/test_slug.py":  "def test_x(): pass\n",
		"src/a.test.ts":       "",
	}
	read := func(f string) ([]byte, error) {
		if d, ok := files[f]; ok {
			return []byte(d), nil
		}
		return nil, os.ErrNotExist
	}
	own := Owner([]string{"mul_test.go", "sub/suite_test.go", "svc/api/api_test.go", "tests/test_slug.py", "src/a.test.ts"}, read, []string{"example.com/calc.TestAdd", "sum adds::sum adds"})
	for name, want := range map[string]bool{
		"example.com/calc.TestMul":               true,
		"example.com/calc.TestMul/sub":           true,
		"example.com/calc.ExampleMul":            true,
		"example.com/calc.TestAdd":               false,
		"example.com/calc.TestNew":               false,
		"example.com/other.TestMul":              false, // the same name in a package of no changed file
		"example.com/calc/sub.TestSuite/TestNew": true,
		"example.com/calc/sub.TestSuite/TestOld": false,
		"example.com/svc/api.TestAPI":            true, // a module of its own below the root
		"tests.test_slug::test_x":                true,
		"tests.test_slug.TestCls::test_y":        true,
		"tests.test_other::test_z":               true, // new, and no rule disowns it
		"src/a.test.ts::adds":                    true,
		"src/a.test.ts":                          true,
		"sum adds::sum adds":                     false, // old, owned by nothing
		"doctest:slug::src/lib.rs - add":         true,
		"tests.test_slugger::test_x_other":       true,
	} {
		if got := own(name); got != want {
			t.Errorf("owner(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestExpand: the file and directory variables expand to elements of their
// own, the results directory anywhere in an element; nothing else.
func TestExpand(t *testing.T) {
	v := Vars{Results: "/r", Files: []string{"a_test.go", "pkg/b_test.go", "pkg/c_test.go"}}
	got := v.Expand([]string{"go", "test", "-json", "${RUNNER_TEST_DIRS}", "--out=${RUNNER_TEST_RESULTS}/x", "${RUNNER_TEST_FILES}", "$HOME", "${RUNNER_TEST_FILES}x"})
	want := []string{"go", "test", "-json", ".", "./pkg", "--out=/r/x", "a_test.go", "pkg/b_test.go", "pkg/c_test.go", "$HOME", "${RUNNER_TEST_FILES}x"}
	if !slices.Equal(got, want) {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	// The files are not in the environment: a test could tell the
	// witness's run from the guard's by them.
	if env := strings.Join(v.Env(), "|"); env != "RUNNER_TEST_RESULTS=/r" {
		t.Errorf("Env = %q", env)
	}
}

// TestCachesVerify: a digest taken after a run holds until a file of the
// caches changes, is added or is removed; then Verify empties them. With
// no digest recorded, caches are emptied unless trusted.
func TestCachesVerify(t *testing.T) {
	c := Caches{Root: filepath.Join(t.TempDir(), "guard-cache")}
	if d, err := c.Digest(); err != nil || d != "" {
		t.Fatalf("no caches: %q, %v", d, err)
	}
	if err := c.Prepare(); err != nil {
		t.Fatal(err)
	}
	entry := filepath.Join(c.Root, "go-build", "ab", "entry-d")
	os.MkdirAll(filepath.Dir(entry), 0o755)
	os.WriteFile(entry, []byte("object"), 0o444)
	want, err := c.Digest()
	if err != nil || want == "" {
		t.Fatal(want, err)
	}
	os.WriteFile(filepath.Join(c.tmp(), "scratch"), []byte("x"), 0o644) // TMPDIR is not digested
	if wiped, err := c.Verify(want, false); wiped || err != nil {
		t.Fatalf("unchanged caches wiped: %v %v", wiped, err)
	}
	for name, poison := range map[string]func(){
		"changed": func() { os.Chmod(entry, 0o644); os.WriteFile(entry, []byte("fixed!"), 0o444) },
		"same size, same time": func() {
			st, _ := os.Stat(entry)
			os.Chmod(entry, 0o644)
			os.WriteFile(entry, []byte("OBJECT"), 0o444)
			os.Chtimes(entry, st.ModTime(), st.ModTime())
		},
		"added": func() { os.WriteFile(filepath.Join(c.Root, "go-build", "ab", "other-a"), []byte("x"), 0o444) },
	} {
		c.Prepare()
		os.MkdirAll(filepath.Dir(entry), 0o755)
		os.WriteFile(entry, []byte("object"), 0o444)
		want, _ := c.Digest()
		poison()
		if wiped, err := c.Verify(want, true); !wiped || err != nil {
			t.Errorf("%s: not wiped (%v)", name, err)
		}
		if _, err := os.Stat(c.Root); !os.IsNotExist(err) {
			t.Errorf("%s: caches left: %v", name, err)
		}
	}
	c.Prepare()
	os.WriteFile(filepath.Join(c.Root, "go-build", "x"), []byte("x"), 0o644)
	if wiped, _ := c.Verify("", true); wiped {
		t.Error("trusted caches with no digest were wiped")
	}
	if wiped, _ := c.Verify("", false); !wiped {
		t.Error("untrusted caches with no digest were kept")
	}
	// An entry whose time was set ahead (a cargo fingerprint a test of the
	// guard's run made newer than any source to come): emptied, though
	// the digest recorded after that run says nothing changed since.
	c.Prepare()
	ahead := filepath.Join(c.Root, "cargo-target", "debug", "fingerprint")
	os.MkdirAll(filepath.Dir(ahead), 0o755)
	os.WriteFile(ahead, []byte("x"), 0o644)
	later := time.Now().Add(24 * time.Hour)
	os.Chtimes(ahead, later, later)
	want, _ = c.Digest()
	if wiped, err := c.Verify(want, true); !wiped || err != nil {
		t.Errorf("an entry modified in the future: not wiped (%v)", err)
	}
}

// TestRemoveBuildOutputs: the build outputs a session may leave are
// removed, in ignored files and inside ignored directories, without
// walking the dependency directories; sources and __pycache__ stay.
func TestRemoveBuildOutputs(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{
		"tsconfig.tsbuildinfo", "dist/app.tsbuildinfo", "dist/app.js",
		"node_modules/.cache/babel/x", "node_modules/.vite/deps/y", "node_modules/lib/index.js",
		"web/node_modules/.cache/z", "lib/helper.pyc", "lib/__pycache__/helper.cpython-311.pyc",
		".venv/lib/site-packages/mod.pyc", "build/out/gen.pyc",
	} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	removed, err := RemoveBuildOutputs(root, []string{"tsconfig.tsbuildinfo", "dist/", "node_modules/", "web/node_modules/", "lib/helper.pyc", "lib/__pycache__/", ".venv/", "build/"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"build/out/gen.pyc", "dist/app.tsbuildinfo", "lib/__pycache__", "lib/helper.pyc", "node_modules/.cache", "node_modules/.vite", "tsconfig.tsbuildinfo", "web/node_modules/.cache"}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	for _, kept := range []string{"dist/app.js", "node_modules/lib/index.js", ".venv/lib/site-packages/mod.pyc"} {
		if _, err := os.Stat(filepath.Join(root, kept)); err != nil {
			t.Errorf("%s removed", kept)
		}
	}
}

// TestScratchPrepare: the scratch holds the commit's files, the work tree's
// version of the files given (a missing one removed), links to the
// dependency directories, and nothing of an earlier preparation.
func TestScratchPrepare(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required")
	}
	root := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write := func(f, data string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
		os.WriteFile(filepath.Join(root, f), []byte(data), 0o644)
	}
	run("init", "-q", "-b", "main")
	write("a.py", "old\n")
	write("tests/test_a.py", "old test\n")
	write("gone.py", "x\n")
	run("add", "-A")
	run("commit", "-qm", "base")
	write("a.py", "new\n")
	write("tests/test_a.py", "new test\n")
	os.Remove(filepath.Join(root, "gone.py"))
	write("node_modules/dep/index.js", "dep\n")
	repo, err := git.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	s := ScratchFor(filepath.Join(t.TempDir(), "gitdir"))
	os.MkdirAll(s.Dir, 0o755)
	os.WriteFile(filepath.Join(s.Dir, "leftover"), []byte("x"), 0o644)
	if err := s.Prepare(repo, "HEAD", root, []string{"tests/test_a.py"}, Links([]string{"node_modules/", "dist/", ".runner/iterations/"})); err != nil {
		t.Fatal(err)
	}
	read := func(f string) string { b, _ := os.ReadFile(filepath.Join(s.Dir, f)); return string(b) }
	if read("a.py") != "old\n" || read("tests/test_a.py") != "new test\n" || read("gone.py") != "x\n" || read("leftover") != "" {
		t.Errorf("base: a.py %q, test %q, gone %q, leftover %q", read("a.py"), read("tests/test_a.py"), read("gone.py"), read("leftover"))
	}
	if read("node_modules/dep/index.js") != "dep\n" {
		t.Error("node_modules not linked")
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, "dist")); err == nil {
		t.Error("a build output was linked")
	}
	if err := s.Prepare(repo, "HEAD", root, []string{"a.py", "tests/test_a.py", "gone.py"}, nil); err != nil {
		t.Fatal(err)
	}
	if read("a.py") != "new\n" || read("tests/test_a.py") != "new test\n" {
		t.Errorf("new: a.py %q, test %q", read("a.py"), read("tests/test_a.py"))
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "gone.py")); !os.IsNotExist(err) {
		t.Error("a file the work tree deleted is in the new checkout")
	}

	// A commit whose directory is a symbolic link out of the scratch: the
	// test file copied below it lands in the scratch, not through the link.
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(root, "evil"))
	run("add", "-A")
	run("commit", "-qm", "link")
	write("real/test_b.py", "b\n")
	os.Remove(filepath.Join(root, "evil"))
	os.MkdirAll(filepath.Join(root, "evil"), 0o755)
	write("evil/test_c.py", "c\n")
	if err := s.Prepare(repo, "HEAD", root, []string{"evil/test_c.py"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "test_c.py")); err == nil {
		t.Error("a test file was written through a link out of the scratch")
	}
	if read("evil/test_c.py") != "c\n" {
		t.Errorf("evil/test_c.py in the scratch = %q", read("evil/test_c.py"))
	}
}

// TestFailingSummary: the failing tests of a go test -json report, with
// the first line their output says, for a log that holds only JSON.
func TestFailingSummary(t *testing.T) {
	data, err := os.ReadFile("../testresults/testdata/go-test.json")
	if err != nil {
		t.Fatal(err)
	}
	res, err := testresults.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := "tests by name: 3 passed, 1 failed, 1 skipped\nFAIL example.com/calc.TestFail: calc_test.go:11: nope"
	if got := FailingSummary(res, 5); got != want {
		t.Errorf("FailingSummary =\n%s\nwant\n%s", got, want)
	}
	res.Add("example.com/other", testresults.Error, "package failed")
	if got := FailingSummary(res, 1); !strings.HasSuffix(got, "1 errors, 1 skipped\nFAIL example.com/calc.TestFail: calc_test.go:11: nope\n…") {
		t.Errorf("bounded: %q", got)
	}
	if got := FailingSummary(results(map[string]testresults.Status{"a": testresults.Passed}), 5); got != "" {
		t.Errorf("all passed: %q", got)
	}
}

// TestScratchWorkspaceLinks: the scratch's node_modules is a directory of
// links to the work tree's packages, but a workspace package (a link into
// the work tree, here under a scope) leads to the scratch's copy of it,
// the base code; a package outside the work tree is linked as it is.
func TestScratchWorkspaceLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.MkdirAll(filepath.Join(root, "packages", "sum"), 0o755)
	os.WriteFile(filepath.Join(root, "packages", "sum", "index.js"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\n"), 0o644)
	run("init", "-q", "-b", "main")
	run("add", "-A")
	run("commit", "-qm", "base")
	os.WriteFile(filepath.Join(root, "packages", "sum", "index.js"), []byte("new\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "node_modules", "@demo"), 0o755)
	os.Symlink("../../packages/sum", filepath.Join(root, "node_modules", "@demo", "sum"))
	os.MkdirAll(filepath.Join(outside, "jest"), 0o755)
	os.Symlink(filepath.Join(outside, "jest"), filepath.Join(root, "node_modules", "jest"))
	os.MkdirAll(filepath.Join(root, "node_modules", "plain"), 0o755)
	repo, err := git.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	s := ScratchFor(filepath.Join(t.TempDir(), "gitdir"))
	if err := s.Prepare(repo, "HEAD", root, nil, []string{"node_modules"}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(filepath.Join(s.Dir, "node_modules")); err != nil || !st.IsDir() {
		t.Fatalf("node_modules in the scratch is not a directory: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(s.Dir, "node_modules", "@demo", "sum", "index.js")); string(data) != "old\n" {
		t.Errorf("the workspace package reads %q through node_modules, want the base code's", data)
	}
	for name, want := range map[string]string{"jest": filepath.Join(outside, "jest"), "plain": filepath.Join(root, "node_modules", "plain")} {
		real, _ := filepath.EvalSymlinks(filepath.Join(s.Dir, "node_modules", name))
		if w, _ := filepath.EvalSymlinks(want); real != w {
			t.Errorf("node_modules/%s leads to %s, want %s", name, real, w)
		}
	}
	if msg := NoResults([]string{"junit.xml: not XML"}); !strings.Contains(msg, "; unreadable: junit.xml: not XML") {
		t.Errorf("NoResults does not say what was unreadable: %q", msg)
	}
	if msg := NoResults(nil); strings.Contains(msg, "unreadable") {
		t.Errorf("NoResults with nothing unreadable: %q", msg)
	}
}

// TestEditablePaths: the work-tree directories an editable install names
// (a .pth file's lines, setuptools' finder's package map) are given as
// their scratch counterparts, once each; paths outside the work tree and
// import lines are not.
func TestEditablePaths(t *testing.T) {
	root, top, venv := "/repo", "/scratch", t.TempDir()
	sp := filepath.Join(venv, "lib", "python3.12", "site-packages")
	os.MkdirAll(sp, 0o755)
	os.WriteFile(filepath.Join(sp, "__editable__.slug-0.1.pth"), []byte("/repo/src\n/elsewhere/lib\nimport os\n"), 0o644)
	os.WriteFile(filepath.Join(sp, "other.pth"), []byte("/repo\n"), 0o644)
	os.WriteFile(filepath.Join(sp, "__editable___calc_0_1_finder.py"), []byte("import sys\nMAPPING: dict[str, str] = {'calc': '/repo/lib/calc', 'x': '/repo/src/x'}\nNAMESPACES = {}\n"), 0o644)
	got := EditablePaths(root, top, []string{venv, filepath.Join(t.TempDir(), "none")})
	want := []string{"/scratch/src", "/scratch", "/scratch/lib"}
	if !slices.Equal(got, want) {
		t.Errorf("EditablePaths = %q, want %q", got, want)
	}
}
