package evidence

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/treeloop/treeloop/lib/internal/lazyre"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// NoTestsByName is how a pass reads whose guard reported no tests by name
// ([guard] results = "off"): it stands on the guard's exit status alone.
const NoTestsByName = "exit status only (no tests by name)"

// Said is how a pass on evidence c reads, in the words of Describe: the
// level ("witnessed", "suite only (…)"), or NoTestsByName for a guard
// that reported no tests by name (c nil).
func Said(c *iterdir.Cited) string {
	if c == nil {
		return NoTestsByName
	}
	return Describe(c.Level)
}

// Counts is c's tests in words: "3 passed, 0 failed, 1 skipped; 2 of 2
// that passed before passed again" (errors named when there are some);
// "" for nil.
func Counts(c *iterdir.Cited) string {
	if c == nil {
		return ""
	}
	s := fmt.Sprintf("%d passed, %d failed", c.Passed, c.Failed)
	if c.Errors > 0 {
		s += fmt.Sprintf(", %d in error", c.Errors)
	}
	s += fmt.Sprintf(", %d skipped; %d of %d that passed before passed again", c.Skipped, c.PassedAgain, c.PassToPass)
	return s
}

// WitnessList is c's witness tests, joined by ", " (with "and N more" for
// those a trailer names only by number); "" when there are none.
func WitnessList(c *iterdir.Cited) string {
	if c == nil {
		return ""
	}
	s := strings.Join(c.Witnesses, ", ")
	if c.Unlisted > 0 {
		s += fmt.Sprintf(" and %d more", c.Unlisted)
	}
	return strings.TrimPrefix(s, " ")
}

// OfRow is a history row's evidence column: what the pass of a passed
// iteration stands on (Said), "-" for any other.
func OfRow(r iterdir.Row) string {
	if r.Result != string(vocab.ResultPassed) {
		return "-"
	}
	return Said(r.Evidence)
}

// Stands is what a pass stands on: Said, and for a witnessed pass its
// witness tests ("witnessed by t1, t2").
func Stands(c *iterdir.Cited) string {
	s := Said(c)
	if w := WitnessList(c); w != "" && c.Level == tree.EvidenceWitness {
		s += " by " + w
	}
	return s
}

// Line is a pass's evidence on one line, as runner-status and iter-log
// show it: Stands, then Counts ("witnessed by t1; 3 passed, …").
func Line(c *iterdir.Cited) string {
	s := Stands(c)
	if n := Counts(c); n != "" {
		s += "; " + n
	}
	return s
}

// From is who decided a node's evidence level, in words
// (iterdir.Evidence.LevelFrom).
func From(levelFrom string) string {
	switch levelFrom {
	case FromNode:
		return "the node's evidence field"
	case FromSuiteNodes:
		return "[guard] suite_nodes"
	case FromConfig:
		return "[guard] evidence"
	}
	return levelFrom
}

// The git trailer keys of a passed iteration's evidence (DESIGN.md
// decision 24), written by loop-commit: the level the pass met, with the
// tests that passed and must pass again, and each witness (at most
// MaxWitnessTrailers).
const (
	EvidenceTrailer    = "Treeloop-Evidence"
	WitnessTrailer     = "Treeloop-Witness"
	MaxWitnessTrailers = 20
)

// Trailers are a passed iteration's evidence trailers:
// "Treeloop-Evidence: witness; 42 passed, 40 of 40 passed before" (", 3
// skipped" after the passed when some were) and "Treeloop-Witness:
// <test>" for each witness. A level "" is written as suite.
func Trailers(ev iterdir.Evidence) []string {
	level := ev.Level
	if level == "" {
		level = tree.EvidenceSuite
	}
	skipped := ""
	if ev.Skipped > 0 {
		skipped = fmt.Sprintf(", %d skipped", ev.Skipped)
	}
	t := []string{fmt.Sprintf("%s: %s; %d passed%s, %d of %d passed before", EvidenceTrailer, level, ev.Passed, skipped, ev.PassToPass-len(ev.Missing), ev.PassToPass)}
	if ev.Witness != nil {
		for i, w := range ev.Witness.Tests {
			if i == MaxWitnessTrailers {
				t = append(t, fmt.Sprintf("%s: and %d more", WitnessTrailer, len(ev.Witness.Tests)-i))
				break
			}
			t = append(t, WitnessTrailer+": "+trailerValue(w))
		}
	}
	return t
}

// trailerValue is s with control characters as spaces: a trailer is one
// line.
func trailerValue(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s))
}

var (
	evidenceValue = lazyre.New(`^(\S+); (\d+) passed(?:, (\d+) skipped)?, (\d+) of (\d+) passed before$`)
	moreWitnesses = lazyre.New(`^and (\d+) more$`)
)

// ParseTrailers reads a passed iteration's evidence back from its commit's
// trailer lines ("Key: value", Trailers' format; other keys ignored): nil
// when they hold no Treeloop-Evidence line that reads. A pass the trailers
// cite stood, so it is Held with no test failed or in error.
func ParseTrailers(lines []string) *iterdir.Cited {
	var c *iterdir.Cited
	var witnesses []string
	unlisted := 0
	for _, l := range lines {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch {
		case strings.EqualFold(k, EvidenceTrailer) && c == nil:
			m := evidenceValue().FindStringSubmatch(v)
			if m == nil {
				continue
			}
			c = &iterdir.Cited{Level: m[1], Held: true, Passed: atoi(m[2]), Skipped: atoi(m[3]), PassedAgain: atoi(m[4]), PassToPass: atoi(m[5])}
		case strings.EqualFold(k, WitnessTrailer):
			if m := moreWitnesses().FindStringSubmatch(v); m != nil {
				unlisted += atoi(m[1])
			} else if v != "" {
				witnesses = append(witnesses, v)
			}
		}
	}
	if c != nil {
		c.Witnesses, c.Unlisted = append([]string{}, witnesses...), unlisted
	}
	return c
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
