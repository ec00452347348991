package ratchet

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A ratchet by names (DESIGN.md decision 21): a count can stay at its best
// while a real test fails (a TestMain that calls os.Exit(0) after m.Run,
// beside one new empty test), so the guard's own output is read for test
// events as it streams (Events, an io.Writer fed every byte of it, not the
// capped log), in the formats the ratchet knows:
//
//   - `go test -json` (test2json): {"Action":"pass"|"fail","Package":…,"Test":…};
//     a test is named "<package>.<test>", a package-level fail is a failure
//     too;
//   - `go test -v` text: "--- PASS: <test> (…)", "--- FAIL: <test> (…)",
//     and "FAIL\t<package>" / "FAIL" lines.
//
// Any failure event fails the guard whatever its exit status, and every
// test that passed at the run's best (Names, kept in the repository by the
// runner) must pass again.

// maxLine is the longest output line read for an event; a longer one is
// skipped (no event line is that long).
const maxLine = 1 << 20

// Events collects the test events of a guard's output written to it.
type Events struct {
	partial []byte
	skip    bool // the current line is longer than maxLine
	passed  map[string]bool
	failed  map[string]bool
}

// NewEvents is an empty collector.
func NewEvents() *Events {
	return &Events{passed: map[string]bool{}, failed: map[string]bool{}}
}

// Write takes the next bytes of the output; it never fails.
func (e *Events) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			e.keep(p)
			break
		}
		e.keep(p[:i])
		if !e.skip {
			e.line(e.partial)
		}
		e.partial, e.skip = e.partial[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (e *Events) keep(p []byte) {
	if e.skip || len(e.partial)+len(p) > maxLine {
		e.partial, e.skip = e.partial[:0], true
		return
	}
	e.partial = append(e.partial, p...)
}

// Close takes a last line without a newline.
func (e *Events) Close() error {
	if len(e.partial) > 0 && !e.skip {
		e.line(e.partial)
	}
	e.partial = nil
	return nil
}

var (
	verbose = regexp.MustCompile(`^\s*--- (PASS|FAIL): (\S+) \(`)
	pkgFail = regexp.MustCompile(`^FAIL(\s|$)`)
)

// event is one test2json record, as far as the ratchet reads it.
type event struct {
	Action  string
	Package string
	Test    string
}

func (e *Events) line(l []byte) {
	l = bytes.TrimRight(l, "\r")
	if len(l) > 0 && l[0] == '{' && bytes.Contains(l, []byte(`"Action"`)) {
		var ev event
		if json.Unmarshal(l, &ev) == nil {
			name := ev.Package
			if ev.Test != "" {
				name = ev.Package + "." + ev.Test
			}
			switch {
			case ev.Action == "fail":
				e.failed[name] = true
			case ev.Action == "pass" && ev.Test != "":
				e.passed[name] = true
			}
			return
		}
	}
	if m := verbose.FindSubmatch(l); m != nil {
		if string(m[1]) == "PASS" {
			e.passed[string(m[2])] = true
		} else {
			e.failed[string(m[2])] = true
		}
		return
	}
	if pkgFail.Match(l) {
		e.failed[strings.TrimSpace(strings.TrimPrefix(string(l), "FAIL"))] = true
	}
}

// Passed is the tests that passed and never failed, sorted.
func (e *Events) Passed() []string {
	var out []string
	for n := range e.passed {
		if !e.failed[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Failed is what failed (tests, or packages: "" for a bare FAIL), sorted.
func (e *Events) Failed() []string {
	out := make([]string, 0, len(e.failed))
	for n := range e.failed {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Missing is the names of best that are not in passed (both sorted).
func Missing(best, passed []string) []string {
	var out []string
	for _, n := range best {
		if _, found := slices.BinarySearch(passed, n); !found {
			out = append(out, n)
		}
	}
	return out
}

// NamesHeader starts the names file (layout.TestsPassed) for run runID.
func NamesHeader(runID string) string {
	return "# treeloop: tests passed at the best of run " + runID + "\n"
}

// FormatNames is the names file's bytes: the header, then one name a line.
func FormatNames(runID string, names []string) []byte {
	var b strings.Builder
	b.WriteString(NamesHeader(runID))
	for _, n := range names {
		b.WriteString(n + "\n")
	}
	return []byte(b.String())
}

// ParseNames reads the names file's bytes for run runID; ok is false when
// it is another run's (or not a names file), whose names do not bind this
// run.
func ParseNames(runID string, data []byte) (names []string, ok bool) {
	rest, found := strings.CutPrefix(string(data), NamesHeader(runID))
	if !found {
		return nil, false
	}
	for _, l := range strings.Split(rest, "\n") {
		if l != "" {
			names = append(names, l)
		}
	}
	sort.Strings(names)
	return names, true
}
