package ratchet

import (
	"sort"
	"strings"
)

// A ratchet by names (DESIGN.md decision 21): a count can stay at its best
// while a real test fails (a TestMain that calls os.Exit(0) after m.Run,
// beside one new empty test), so the guard's own output is read for test
// events as it streams (lib/testresults' Stream, an io.Writer fed every byte
// of it, not the capped log), in the formats the ratchet knows:
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
