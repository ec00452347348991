// Package testresults reads a guard's tests by name (DESIGN.md decision
// 24): the files a test runner writes into the results directory the
// runner gives the guard ($RUNNER_TEST_RESULTS), and the runner's own
// per-test lines in the guard's output. The formats:
//
//   - JUnit XML, which pytest (--junitxml), jest (jest-junit), vitest
//     (--reporter=junit), mocha, cargo-nextest, PHPUnit, RSpec, Maven and
//     Gradle write: a test is "<classname>::<name>" (or its name alone);
//   - jest's own JSON (--json --outputFile): "<file>::<full name>";
//   - `go test -json` (test2json) and `go test -v` text: "<package>.<Test>"
//     (the -v text has no package: "<Test>");
//   - libtest's lines (plain `cargo test`): "<target>::<path>", the target
//     being the source of the test binary that cargo says it runs.
//
// Skipped, xfail, ignored, pending and todo tests are skipped, never
// passed; a test reported more than once keeps its worst status (a failure
// or an error wins), so a fake "pass" line cannot hide a real failure.
package testresults

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Status is a test's outcome.
type Status string

// The statuses, best to worst.
const (
	Passed  Status = "passed"
	Skipped Status = "skipped" // skipped, xfail, ignored, pending, todo, deselected
	Failed  Status = "failed"
	Error   Status = "error" // the test, its file or its package could not run
)

// rank orders statuses: a test reported twice keeps the higher.
func (s Status) rank() int {
	switch s {
	case Passed:
		return 1
	case Skipped:
		return 2
	case Failed:
		return 3
	case Error:
		return 4
	}
	return 0
}

// Test is one test's outcome.
type Test struct {
	Name   string
	Status Status
	// Message is the first line of a failure or error, for a person ("" when
	// none).
	Message string
}

// Results are the tests a run reported by name. The zero value is empty and
// ready to use.
type Results struct {
	tests map[string]*Test
	// Sources are the results files read, by base name, sorted; "output"
	// when the guard's own output reported tests.
	Sources []string
	// Unreadable names the results files that could not be read, with why.
	Unreadable []string
}

// Add records a test; a second report of the same name keeps the worse
// status (and its message).
func (r *Results) Add(name string, st Status, message string) {
	name = strings.TrimSpace(name)
	if name == "" {
		return
	}
	if r.tests == nil {
		r.tests = map[string]*Test{}
	}
	if old, ok := r.tests[name]; ok {
		if st.rank() <= old.Status.rank() {
			return
		}
	}
	r.tests[name] = &Test{Name: name, Status: st, Message: firstLine(message)}
}

// Merge adds every test of o, and its sources and problems.
func (r *Results) Merge(o Results) {
	for _, t := range o.tests {
		r.Add(t.Name, t.Status, t.Message)
	}
	for _, s := range o.Sources {
		r.addSource(s)
	}
	r.Unreadable = append(r.Unreadable, o.Unreadable...)
}

func (r *Results) addSource(s string) {
	if !slices.Contains(r.Sources, s) {
		r.Sources = append(r.Sources, s)
		sort.Strings(r.Sources)
	}
}

// Len is how many tests were reported.
func (r Results) Len() int { return len(r.tests) }

// Get is the test named name.
func (r Results) Get(name string) (Test, bool) {
	t, ok := r.tests[name]
	if !ok {
		return Test{}, false
	}
	return *t, true
}

// With is the names of the tests of status st, sorted.
func (r Results) With(st Status) []string {
	var out []string
	for n, t := range r.tests {
		if t.Status == st {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Tests is every test, sorted by name.
func (r Results) Tests() []Test {
	out := make([]Test, 0, len(r.tests))
	for _, t := range r.tests {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Counts is how many tests have each status.
type Counts struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errors  int `json:"errors"`
	Skipped int `json:"skipped"`
}

// Counts counts the tests by status.
func (r Results) Counts() Counts {
	var c Counts
	for _, t := range r.tests {
		switch t.Status {
		case Passed:
			c.Passed++
		case Failed:
			c.Failed++
		case Error:
			c.Errors++
		case Skipped:
			c.Skipped++
		}
	}
	return c
}

// String is the counts on one line: "12 passed, 1 failed, 2 skipped".
func (c Counts) String() string {
	parts := []string{fmt.Sprintf("%d passed", c.Passed)}
	if c.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", c.Failed))
	}
	if c.Errors > 0 {
		parts = append(parts, fmt.Sprintf("%d errors", c.Errors))
	}
	if c.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", c.Skipped))
	}
	return strings.Join(parts, ", ")
}

// Missing is the names of want that did not pass in r, sorted: not
// reported, skipped, failed or in error.
func (r Results) Missing(want []string) []string {
	var out []string
	for _, n := range want {
		if t, ok := r.tests[n]; !ok || t.Status != Passed {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Relative rewrites every name that holds the absolute directory root (a
// file path a runner reported absolute, as jest does) relative to it, so
// that the same tests run in two checkouts have the same names.
func (r *Results) Relative(root string) {
	root = strings.TrimSuffix(root, "/")
	if root == "" || r.tests == nil {
		return
	}
	old := r.tests
	r.tests = nil
	for _, t := range old {
		name := strings.ReplaceAll(t.Name, root+"/", "")
		r.Add(name, t.Status, t.Message)
	}
}

// firstLine is the first non-empty line of s, trimmed and cut to 200 bytes.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			return l
		}
	}
	return ""
}

// List names up to ten of names, and how many more: for one-line messages.
func List(names []string) string {
	if len(names) > 10 {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:10], ", "), len(names)-10)
	}
	return strings.Join(names, ", ")
}
