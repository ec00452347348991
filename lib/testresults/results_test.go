package testresults

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestParseRealReports: reports written by the real runners (pytest,
// jest's JSON and jest-junit, vitest's JUnit, go test -json, cargo test),
// kept in testdata with their absolute paths made /ROOT/, give each test
// its status: skipped, xfail, ignored, pending and todo are never passes,
// a file that cannot run is an error, and a fake "--- PASS" line a test
// prints inside go test -json is not a test.
func TestParseRealReports(t *testing.T) {
	for _, c := range []struct {
		file                    string
		passed, failed, skipped []string
		errors                  []string
		relative                bool
	}{
		{file: "pytest.xml",
			passed:  []string{"tests.test_slug.TestCls::test_param[a]", "tests.test_slug.TestCls::test_param[b]", "tests.test_slug::test_basic"},
			failed:  []string{"tests.test_slug::test_fail"},
			skipped: []string{"tests.test_slug::test_skip", "tests.test_slug::test_xfail"}},
		{file: "pytest-collect-error.xml",
			passed:  []string{"tests.test_slug.TestCls::test_param[a]", "tests.test_slug.TestCls::test_param[b]", "tests.test_slug::test_basic"},
			failed:  []string{"tests.test_slug::test_fail"},
			skipped: []string{"tests.test_slug::test_skip", "tests.test_slug::test_xfail"},
			errors:  []string{"tests.test_broken"}},
		{file: "jest.json", relative: true,
			passed:  []string{"__tests__/sum.test.js::sum adds"},
			failed:  []string{"__tests__/sum.test.js::sum fails"},
			skipped: []string{"__tests__/sum.test.js::sum later", "__tests__/sum.test.js::sum someday"},
			errors:  []string{"__tests__/broken.test.js"}},
		{file: "jest-junit.xml",
			passed:  []string{"sum adds::sum adds", "sum someday::sum someday"},
			failed:  []string{"sum fails::sum fails"},
			skipped: []string{"sum later::sum later"}},
		{file: "vitest.xml",
			passed:  []string{"test/sum.test.js::sum > adds"},
			failed:  []string{"test/broken.test.js::test/broken.test.js", "test/sum.test.js::sum > fails"},
			skipped: []string{"test/sum.test.js::sum > later"}},
		{file: "go-test.json",
			passed:  []string{"example.com/calc.TestAdd", "example.com/calc.TestSub", "example.com/calc.TestSub/one"},
			failed:  []string{"example.com/calc.TestFail"},
			skipped: []string{"example.com/calc.TestSkip"}},
		{file: "cargo-test.out",
			passed:  []string{"doctest:slugr::src/lib.rs - add (line 3)", "src/lib.rs::tests::it_works", "tests/cli.rs::integration"},
			failed:  []string{"src/lib.rs::tests::it_fails"},
			skipped: []string{"src/lib.rs::tests::later"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if c.relative {
				r.Relative("/ROOT")
			}
			for st, want := range map[Status][]string{Passed: c.passed, Failed: c.failed, Skipped: c.skipped, Error: c.errors} {
				if got := r.With(st); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Errorf("%s: %q, want %q", st, got, want)
				}
			}
		})
	}
}

// TestWorstStatusWins: a test reported twice keeps its worse status,
// whatever the order, so a printed "pass" cannot hide a failure.
func TestWorstStatusWins(t *testing.T) {
	var r Results
	r.Add("a", Failed, "boom\nmore")
	r.Add("a", Passed, "")
	r.Add("b", Passed, "")
	r.Add("b", Skipped, "")
	r.Add("c", Skipped, "")
	r.Add("c", Error, "could not run")
	if got, _ := r.Get("a"); got.Status != Failed || got.Message != "boom" {
		t.Errorf("a: %+v", got)
	}
	if got, _ := r.Get("b"); got.Status != Skipped {
		t.Errorf("b: %+v", got)
	}
	if got, _ := r.Get("c"); got.Status != Error {
		t.Errorf("c: %+v", got)
	}
	if got := r.Missing([]string{"a", "b", "c", "d"}); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Errorf("Missing = %q", got)
	}
	r.Add("d", Passed, "")
	if got := r.Missing([]string{"b", "d"}); !slices.Equal(got, []string{"b"}) {
		t.Errorf("Missing = %q", got)
	}
	if got := r.Counts().String(); got != "1 passed, 1 failed, 1 errors, 1 skipped" {
		t.Errorf("Counts = %q", got)
	}
}

// TestStreamInPieces: the line formats read from a stream fed in pieces
// that split lines; a line longer than the limit is skipped, not cut.
func TestStreamInPieces(t *testing.T) {
	out := `{"Action":"pass","Package":"ex/calc","Test":"TestAdd"}
{"Action":"output","Package":"ex/calc","Test":"TestAdd","Output":"--- PASS: TestFake (0.00s)\n"}
=== RUN   TestText
--- PASS: TestText (0.00s)
--- SKIP: TestLater (0.00s)
FAIL	ex/third [build failed]
     Running tests/cli.rs (target/debug/deps/cli-1)
test integration ... ok
test slow ... ignored, needs a database
test ` + strings.Repeat("x", maxLine+1) + ` ... ok
test last ... FAILED`
	var s Stream
	for i := 0; i < len(out); i += 7 {
		s.Write([]byte(out[i:min(i+7, len(out))]))
	}
	s.Close()
	r := s.Results()
	if got, want := r.With(Passed), []string{"TestText", "ex/calc.TestAdd", "tests/cli.rs::integration"}; !slices.Equal(got, want) {
		t.Errorf("passed %q, want %q", got, want)
	}
	if got, want := r.With(Skipped), []string{"TestLater", "tests/cli.rs::slow"}; !slices.Equal(got, want) {
		t.Errorf("skipped %q, want %q", got, want)
	}
	if got, want := r.With(Failed), []string{"tests/cli.rs::last"}; !slices.Equal(got, want) {
		t.Errorf("failed %q, want %q", got, want)
	}
	if got, want := r.With(Error), []string{"ex/third [build failed]"}; !slices.Equal(got, want) {
		t.Errorf("errors %q, want %q", got, want)
	}
	if !slices.Equal(r.Sources, []string{"output"}) {
		t.Errorf("sources %q", r.Sources)
	}
	// Structured holds test2json's events alone: the "--- PASS: TestFake"
	// a test printed inside one is no test, nor are the text lines.
	if got, want := s.Structured().With(Passed), []string{"ex/calc.TestAdd"}; !slices.Equal(got, want) || s.Structured().Len() != 1 {
		t.Errorf("structured %q, want %q", got, want)
	}
}

// TestReadDir: every file of the directory is read by its content; a file
// in no known format, or a broken one, is unreadable and says why; an
// empty one is neither.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("unit.xml", `<testsuite name="s"><testcase classname="c" name="a"/></testsuite>`)
	write("sub/go.json", `{"Action":"pass","Package":"p","Test":"TestB"}`+"\n")
	write("notes.txt", "nothing here\n")
	write("cut.xml", `<testsuite name="s"><testcase classname="c" name="a"`)
	write("empty.xml", "")
	write("other.json", `{"hello": 1}`)
	r, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.With(Passed); !slices.Equal(got, []string{"c::a", "p.TestB"}) {
		t.Errorf("passed %q", got)
	}
	if !slices.Equal(r.Sources, []string{"sub/go.json", "unit.xml"}) {
		t.Errorf("sources %q", r.Sources)
	}
	if len(r.Unreadable) != 3 || !strings.HasPrefix(r.Unreadable[0], "cut.xml: JUnit XML") || !strings.HasPrefix(r.Unreadable[1], "notes.txt: no test by name") || !strings.HasPrefix(r.Unreadable[2], "other.json: JSON without testResults") {
		t.Errorf("unreadable %q", r.Unreadable)
	}
	if _, err := ReadDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing directory read")
	}
}

// TestCountsAndMessages: the counts name only the statuses some test has;
// a stream with no test has no source; a Go test's failure message is the
// first line its output says, past "=== RUN" and "--- FAIL", cut at 200
// bytes; a package that fails with no failing test is in error, one with
// a failing test is not.
func TestCountsAndMessages(t *testing.T) {
	var r Results
	r.Add("a", Passed, "")
	if got := r.Counts().String(); got != "1 passed" {
		t.Errorf("Counts = %q, want 1 passed alone", got)
	}
	var empty Stream
	empty.Close()
	if s := empty.Results().Sources; len(s) != 0 {
		t.Errorf("an empty stream's sources %q", s)
	}
	if s := empty.Structured().Sources; len(s) != 0 {
		t.Errorf("an empty stream's structured sources %q", s)
	}
	long := strings.Repeat("x", 200)
	out := `{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:5: boom\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:6: later\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"` + long + `\n"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestC","Output":"` + long + `y\n"}
{"Action":"fail","Package":"p","Test":"TestC"}
{"Action":"fail","Package":"p"}
{"Action":"output","Package":"q","Output":"q.go:1: undefined: X\n"}
{"Action":"fail","Package":"q"}
`
	var s Stream
	s.Write([]byte(out))
	s.Close()
	res := s.Results()
	for name, want := range map[string]string{"p.TestA": "a_test.go:5: boom", "p.TestB": long, "p.TestC": long + "…"} {
		if got, _ := res.Get(name); got.Message != want || got.Status != Failed {
			t.Errorf("%s: %s %q, want failed %q", name, got.Status, got.Message, want)
		}
	}
	if got, ok := res.Get("p"); ok {
		t.Errorf("a package with a failing test is reported itself: %+v", got)
	}
	if got, _ := res.Get("q"); got.Status != Error {
		t.Errorf("a package that failed with no failing test: %+v", got)
	}
}

// TestStreamEdges: a piece that starts with the newline ending the line
// before still ends it; a line of exactly the limit is read, one byte
// more is skipped; a second report of a test with the same status keeps
// the first message.
func TestStreamEdges(t *testing.T) {
	var s Stream
	s.Write([]byte("--- PASS: TestA (0.00s)"))
	s.Write([]byte("\n--- PASS: TestB (0.00s)\n"))
	event := func(name string, width int) string {
		l := `{"Action":"pass","Package":"p","Test":"` + name + `"`
		return l + strings.Repeat(" ", width-len(l)-1) + "}\n"
	}
	s.Write([]byte(event("TestAtLimit", maxLine)))
	s.Write([]byte(event("TestPastLimit", maxLine+1)))
	s.Close()
	if got, want := s.Results().With(Passed), []string{"TestA", "TestB", "p.TestAtLimit"}; !slices.Equal(got, want) {
		t.Errorf("passed %q, want %q", got, want)
	}
	var r Results
	r.Add("x", Failed, "first")
	r.Add("x", Failed, "second")
	if got, _ := r.Get("x"); got.Message != "first" {
		t.Errorf("a second failure replaced the first's message: %q", got.Message)
	}
}

// TestParseJUnitEdges: an empty <testsuites> is JUnit with no test, XML
// with no <testsuite> is not JUnit; a failure's message is its message
// attribute, else its text; a suite nested in a suite is read whole.
func TestParseJUnitEdges(t *testing.T) {
	if r, err := Parse([]byte(`<testsuites></testsuites>`)); err != nil || r.Len() != 0 {
		t.Errorf("an empty <testsuites>: %d tests, %v", r.Len(), err)
	}
	if _, err := Parse([]byte(`<html><body/></html>`)); err == nil || !strings.Contains(err.Error(), "not JUnit XML") {
		t.Errorf("XML with no <testsuite>: %v", err)
	}
	r, err := Parse([]byte(`<testsuite name="s">
<testcase classname="c" name="a"><failure message="boom">trace a</failure></testcase>
<testcase classname=" " name="b"><failure>trace b</failure></testcase>
</testsuite>`))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get("c::a"); got.Status != Failed || got.Message != "boom" {
		t.Errorf("c::a: %+v", got)
	}
	if got, _ := r.Get("b"); got.Status != Failed || !strings.Contains(got.Message, "trace b") {
		t.Errorf("b (a blank classname): %+v", got)
	}
	// A suite inside a suite (as some reporters nest them per file and
	// per class): its tests are read too, else they would count missing.
	r, err = Parse([]byte(`<testsuites><testsuite name="outer">
<testcase classname="o" name="top"/>
<testsuite name="inner"><testcase classname="i" name="deep"/></testsuite>
</testsuite></testsuites>`))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"o::top", "i::deep"} {
		if got, ok := r.Get(name); !ok || got.Status != Passed {
			t.Errorf("%s in nested suites: %+v %v", name, got, ok)
		}
	}
}

// TestTestsAndList: Tests is sorted by name; List names ten and counts
// the rest.
func TestTestsAndList(t *testing.T) {
	var r Results
	for _, n := range []string{"c", "a", "b"} {
		r.Add(n, Passed, "")
	}
	var names []string
	for _, x := range r.Tests() {
		names = append(names, x.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "c"}) {
		t.Errorf("Tests() = %q", names)
	}
	ten := strings.Split("a b c d e f g h i j", " ")
	if got := List(ten); got != strings.Join(ten, ", ") {
		t.Errorf("List(ten) = %q", got)
	}
	if got := List(append(ten, "k", "l")); got != strings.Join(ten, ", ")+" and 2 more" {
		t.Errorf("List(twelve) = %q", got)
	}
}
