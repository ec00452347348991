// Package ratchet is the test ratchet ("Test ratchet"): after a
// green guard, [guard] ratchet counts the tests that passed, and a node
// passes only when the count is not below the best seen in the run.
//
// The best is never kept in a file the agent could rewrite: every passed
// iteration's commit carries its count as a trailer (Trailer), and Best
// reads the counts back from the run's commits in git history, from the
// commit the iteration started at. Lowering the best would mean rewriting
// the run branch, which the runner undoes (the branch goes back to the
// iteration's start commit) and which the bwrap sandbox forbids outright.
package ratchet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/treeloop/treeloop/lib/git"
)

// Trailer is the git trailer key of a passed iteration's commit that records
// how many tests passed ("Treeloop-Tests-Passed: 42").
const Trailer = "Treeloop-Tests-Passed"

// TrailerLine is the trailer recording count, to append to a commit
// message after a blank line.
func TrailerLine(count int) string { return fmt.Sprintf("%s: %d", Trailer, count) }

// Parse reads the count the ratchet command printed: the last non-empty
// line of its stdout, a whole number from 0 to 2^31-1. Errors say what was
// printed.
func Parse(stdout []byte) (int, error) {
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return 0, fmt.Errorf("it printed nothing; it must print how many tests passed")
	}
	n, err := strconv.ParseInt(last, 10, 32)
	if err != nil || n < 0 {
		if len(last) > 60 {
			last = last[:60] + "…"
		}
		return 0, fmt.Errorf("its last line %q is not a count of tests", last)
	}
	return int(n), nil
}

// Best is the highest count recorded in run runID's commits reachable from
// rev (git.RunCommits). found is false when none carries a count; commit is
// the commit holding the best (the newest of equals).
func Best(repo *git.Repo, rev, runID string) (best int, commit string, found bool, err error) {
	cs, err := repo.RunCommits(rev, runID, Trailer)
	if err != nil {
		return 0, "", false, err
	}
	for _, c := range cs {
		for _, v := range c.Values {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				continue
			}
			if !found || n > best {
				best, commit, found = n, c.SHA, true
			}
		}
	}
	return best, commit, found, nil
}
