// Package evidence judges a guard's green run by its tests by name, not
// by its exit status alone (DESIGN.md decisions 24 and 25; the SWE-bench
// harness's FAIL_TO_PASS and PASS_TO_PASS):
//
//   - the guard reports its tests by name (lib/testresults), into the
//     directory $RUNNER_TEST_RESULTS names or on its output; none is a
//     failure;
//   - no test fails or is in error, whatever the exit status;
//   - PASS_TO_PASS: every test that passed at the run's last pass (or
//     its baseline) passes again: one that disappears, is skipped,
//     deselected or filtered out by a configuration change fails it;
//   - FAIL_TO_PASS, for an execute leaf at level witness: a test of a test
//     file the node added or changed fails (or cannot run) on the code the
//     node's work began from and passes on the new code, both in a scratch
//     checkout (Scratch), and passes in the guard (lib/guard runs it).
//
// The guard reads only what is committed: its build caches are its own
// (Caches), and the build outputs a session left in the work tree are
// removed before it runs (RemoveBuildOutputs).
package evidence

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/internal/lazyre"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/testresults"
	"github.com/treeloop/treeloop/lib/tree"
)

// Who decided a node's evidence level (iterdir.Evidence.LevelFrom).
const (
	FromNode       = "node"        // the node's evidence field: the operator's, or an agent's proposal
	FromSuiteNodes = "suite_nodes" // [guard] suite_nodes
	FromConfig     = "config"      // [guard] evidence
)

// Level is the evidence the execute leaf n needs: its own evidence field,
// else suite when its id matches [guard] suite_nodes, else [guard]
// evidence; from says which decided.
func Level(n *tree.Node, g config.Guard) (level, from string) {
	if n != nil && n.Evidence != "" {
		return n.Evidence, FromNode
	}
	if n != nil {
		for _, p := range g.SuiteNodes {
			if m, _ := path.Match(p, n.ID); m {
				return tree.EvidenceSuite, FromSuiteNodes
			}
		}
	}
	return g.Evidence, FromConfig
}

// Describe is how a pass at level reads wherever it is shown: "witnessed",
// "suite only (the operator's choice)" or "suite only (proposed by the
// agent)" ("suite only (no level recorded)" for a guard run that judged
// no node); never the same words for a weaker level. Said adds the words
// of a pass with no tests by name.
func Describe(level string) string {
	switch level {
	case tree.EvidenceWitness:
		return "witnessed"
	case tree.EvidenceSuite:
		return "suite only (the operator's choice)"
	case tree.EvidenceProposedSuite:
		return "suite only (proposed by the agent)"
	case "":
		return "suite only (no level recorded)"
	}
	return level
}

// maxFailing bounds the failing tests named in a record.
const maxFailing = 50

// Judge checks the tests by name of a guard that exited 0 (res, names
// relative to the repository) against before (the tests that passed at
// the run's last pass or baseline): there are some, none fails or is in
// error, and every test of before passes. It fills rec's counts, Failing,
// PassToPass, Missing and PassedNames; message says what failed, "" when
// all held.
func Judge(rec *iterdir.Evidence, res testresults.Results, before []string) (message string) {
	c := res.Counts()
	rec.Sources, rec.Unreadable = res.Sources, res.Unreadable
	rec.Passed, rec.Failed, rec.Errors, rec.Skipped = c.Passed, c.Failed, c.Errors, c.Skipped
	failing := append(res.With(testresults.Failed), res.With(testresults.Error)...)
	rec.Failing = failing[:min(len(failing), maxFailing)]
	rec.PassToPass = len(before)
	rec.Missing = res.Missing(before)
	rec.PassedNames = res.With(testresults.Passed)
	switch {
	case res.Len() == 0:
		return NoResults(res.Unreadable)
	case len(failing) > 0:
		return fmt.Sprintf("the guard exited 0 but its tests report failures (%s), so the node does not pass: make them pass", testresults.List(failing))
	case len(rec.Missing) > 0:
		return fmt.Sprintf("tests that passed before this node's work did not pass now (%s): a test that disappears, is skipped, deselected or filtered out by a configuration change does not pass a node; make them pass", testresults.List(rec.Missing))
	}
	return ""
}

// NoResults is the failure of a guard configured for tests by name that
// reported none.
func NoResults(unreadable []string) string {
	msg := "the guard reported no tests by name ([guard] results = \"auto\"): have it write JUnit XML into $" + EnvResults +
		" (pytest --junitxml=${" + EnvResults + "}/pytest.xml, vitest --reporter=junit --outputFile=${" + EnvResults +
		"}/vitest.xml, jest --json --outputFile=${" + EnvResults + "}/jest.json) or print go test -json or cargo test's lines"
	if len(unreadable) > 0 {
		msg += "; unreadable: " + strings.Join(unreadable, "; ")
	}
	return msg
}

// FailingSummary is the failing tests of res and their messages, one a
// line, at most max of them: "tests by name: 3 passed, 1 failed" then
// "FAIL <name>: <message>"; "" when none failed.
func FailingSummary(res testresults.Results, max int) string {
	var lines []string
	for _, t := range res.Tests() {
		if t.Status != testresults.Failed && t.Status != testresults.Error {
			continue
		}
		if len(lines) == max {
			lines = append(lines, "…")
			break
		}
		l := "FAIL " + t.Name
		if t.Status == testresults.Error {
			l = "ERROR " + t.Name
		}
		if t.Message != "" {
			l += ": " + t.Message
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return ""
	}
	return "tests by name: " + res.Counts().String() + "\n" + strings.Join(lines, "\n")
}

// TestFiles are the paths among changed that match one of the globs
// (doublestar syntax), outside the runner's own files, in changed's
// order.
func TestFiles(changed, globs []string) []string {
	var out []string
	for _, p := range changed {
		if strings.HasPrefix(p, ".runner/") {
			continue
		}
		for _, g := range globs {
			if ok, _ := doublestar.Match(g, p); ok {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Witnesses are the tests of the node's test files that pass in the guard
// (the new code) and failed, or could not run, in the scratch on the base
// code: the node's FAIL_TO_PASS tests, sorted. A test the base run did not
// report counts only when it could not run there: its file or package is
// reported failing or in error (a collection error, a build failure), or
// the run reported nothing at all and failed (baseExit not 0: a new test
// file that does not compile stops cargo and tsc before any test). A test
// among before (those that passed at the run's best, before this step) is
// never one: it passed without the node's work, and failed in the scratch
// only for what differs there. Both results are relative to their
// checkouts; owner says which tests are the files' (Owner).
func Witnesses(guard, base testresults.Results, baseExit int, before []string, owner func(name string) bool) []string {
	broken := append(base.With(testresults.Failed), base.With(testresults.Error)...)
	passed := make(map[string]bool, len(before))
	for _, n := range before {
		passed[n] = true
	}
	var out []string
	for _, name := range guard.With(testresults.Passed) {
		if !owner(name) || passed[name] {
			continue
		}
		b, ok := base.Get(name)
		switch {
		case ok && (b.Status == testresults.Failed || b.Status == testresults.Error):
		case ok:
			continue // passed or skipped on the base code
		case base.Len() == 0 && baseExit != 0:
		case !slices.ContainsFunc(broken, func(u string) bool { return covers(u, name) }):
			continue // not run on the base code, and nothing says it could not
		}
		out = append(out, name)
	}
	return out
}

// covers reports whether the failing or erring entry u of a run is the
// file or package of test name: a Go package ("pkg" for "pkg.TestX"), a
// pytest module that did not collect ("tests.test_x" for
// "tests.test_x::test_y" or "tests.test_x.TestC::test_y"), a file that
// did not load (jest's "<file>" or vitest's "<file>::<file>" for
// "<file>::<test>").
func covers(u, name string) bool {
	if strings.HasPrefix(name, u+".") || strings.HasPrefix(name, u+"::") {
		return true
	}
	file, rest, found := strings.Cut(u, "::")
	return found && rest == file && strings.HasPrefix(name, file+"::")
}

// goTestFunc finds a Go test, example or fuzz function's declaration (or a
// test suite's method, as testify's suites declare them), and the
// functions in a test's reported name ("<package>.<Func>[/<sub>...]").
var (
	goTestFunc   = lazyre.New(`(?m)^func (?:\([^)]*\) )?((?:Test|Example|Fuzz)\w*)\(`)
	goTestInName = lazyre.New(`^(.*?)\.((?:Test|Example|Fuzz)\w*)((?:/[^/]*)*)$`)
)

// Owner tells whether a test by name belongs to one of the test files
// (repository-relative; read is how to read one): a Go test whose
// function (or suite method) one of the *_test.go files of its package's
// directory declares, the package's path taken from the nearest go.mod
// above it; a test whose name starts with a file's path
// (vitest, jest, cargo's targets); a pytest test whose class name is the
// file's module path or lies in it. A test no file is seen to own is the
// files' only when its name is not in before (a new test, in a format
// that names no file).
func Owner(files []string, read func(string) ([]byte, error), before []string) func(name string) bool {
	goFuncs := map[string]map[string]bool{} // package path: functions
	var prefixes, modules []string
	for _, f := range files {
		prefixes = append(prefixes, f+"::", f+" ")
		switch {
		case strings.HasSuffix(f, "_test.go"):
			pkg := goPackage(path.Dir(f), read)
			if goFuncs[pkg] == nil {
				goFuncs[pkg] = map[string]bool{}
			}
			if data, err := read(f); err == nil {
				for _, m := range goTestFunc().FindAllSubmatch(data, -1) {
					goFuncs[pkg][string(m[1])] = true
				}
			}
		case strings.HasSuffix(f, ".py"):
			modules = append(modules, strings.ReplaceAll(strings.TrimSuffix(f, ".py"), "/", "."))
		}
	}
	old := map[string]bool{}
	for _, n := range before {
		old[n] = true
	}
	return func(name string) bool {
		if m := goTestInName().FindStringSubmatch(name); m != nil && !strings.Contains(name, "::") {
			fns := goFuncs[m[1]]
			if fns[m[2]] {
				return true
			}
			for _, sub := range strings.Split(m[3], "/") {
				if sub != "" && fns[sub] {
					return true
				}
			}
			return false
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) || name == strings.TrimRight(p, ": ") {
				return true
			}
		}
		if cls, _, found := strings.Cut(name, "::"); found {
			for _, m := range modules {
				if cls == m || strings.HasPrefix(cls, m+".") {
					return true
				}
			}
		}
		return !old[name]
	}
}

// goPackage is the import path of the Go package in directory dir
// (repository-relative), from the nearest go.mod at or above it; dir
// itself when there is none.
func goPackage(dir string, read func(string) ([]byte, error)) string {
	for d := dir; ; d = path.Dir(d) {
		if data, err := read(path.Join(d, "go.mod")); err == nil {
			if mod := goModule(data); mod != "" {
				if d == dir {
					return mod
				}
				return mod + "/" + strings.TrimPrefix(dir, strings.TrimSuffix(d, ".")+"/")
			}
		}
		if d == "." || d == "/" || d == "" {
			return dir
		}
	}
}

// goModule is the module path a go.mod declares ("" when it declares
// none).
func goModule(data []byte) string {
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// NoWitness is the failure of an execute leaf whose test files gave no
// witness, saying what was seen on the base code.
func NoWitness(files []string, base, _ testresults.Results) string {
	if len(files) == 0 {
		return "no test file among this node's changes: an execute leaf passes with a witness, a test it adds or changes that fails without its work and passes with it; write one (or the operator sets this node's evidence to suite: tree-edit set ID evidence=suite)"
	}
	basePassed := base.With(testresults.Passed)
	msg := fmt.Sprintf("no test of this node's test files (%s) fails on the code before its work and passes on the new code", testresults.List(files))
	if len(basePassed) > 0 {
		msg += fmt.Sprintf(" (already passing before: %s)", testresults.List(basePassed))
	}
	return msg + ": a witness is a test that fails without the node's work and passes with it; write one that checks what this node adds"
}
