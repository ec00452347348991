// Package prompt assembles the prompt pack (seed 000 §8): sections in a
// fixed order, fitted into a byte budget by cutting, then dropping, the
// optional sections in a fixed order. The required sections (contract,
// goal, selected node, output contract) are never cut. Pure: the same
// sections and budget give the same bytes.
package prompt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Section names, in prompt order (seed 000 §8).
const (
	Contract    = "contract"    // 1. runner contract and invariants (required)
	RunGoal     = "run_goal"    // 1b. the run's goal, .runner/GOAL.md (000 preamble)
	Goal        = "goal"        // 2. context/goal.md (required)
	History     = "history"     // 3. context/history.md, after an unsuccessful attempt
	Failure     = "failure"     // 4. context/failure.md, after a failed guard
	Node        = "node"        // 5. the selected leaf's path and subtree (required)
	Tree        = "tree"        // 6. bounded summary of the whole tree
	Assumptions = "assumptions" // 7. state/assumptions.md
	Questions   = "questions"   // 7. state/questions.md
	Sidecar     = "sidecar"     // 8. nodes/<id>/context.md
	Artifacts   = "artifacts"   // 8b. nodes/<id>/artifacts/ of the node and its parent, listed
	Output      = "output"      // 9. output contract (required)
)

// Order is the order of the sections in the prompt.
var Order = []string{Contract, RunGoal, Goal, History, Failure, Node, Tree, Assumptions, Questions, Sidecar, Artifacts, Output}

// DropOrder is the order in which optional sections give way to fit the
// budget, least useful first. First each in turn is cut (Failure keeps its
// end, the others their beginning) down to no less than MinKeep bytes of
// body; if that is not enough, whole sections are dropped in the same
// order until the prompt fits.
var DropOrder = []string{Artifacts, Questions, Assumptions, Tree, Sidecar, RunGoal, History, Failure}

// MinKeep is the smallest useful remainder of a cut section, in bytes.
const MinKeep = 512

// Section is one part of the prompt.
type Section struct {
	Name     string // one of the section names
	Heading  string // "## ..." line, without newline; may name the full source file
	Body     string
	Required bool
}

// Fit reports what the budget did to a section.
type Fit struct {
	Name     string `json:"name"`
	Bytes    int    `json:"bytes"`    // bytes in the prompt, heading included
	Original int    `json:"original"` // bytes before fitting
	Action   string `json:"action"`   // kept, cut, dropped
}

// Build renders sections (in Order, absent ones skipped) into a prompt of
// at most budget bytes when the required sections allow it. Over is the
// number of bytes the required sections alone exceed the budget by (0 when
// they fit); the prompt is then longer than the budget but complete.
func Build(sections []Section, budget int) (out []byte, fits []Fit, over int) {
	sections = append([]Section(nil), sections...) // cutting must not change the caller's
	byName := map[string]*Section{}
	for i := range sections {
		byName[sections[i].Name] = &sections[i]
	}
	var present []*Section
	for _, name := range Order {
		if s, ok := byName[name]; ok {
			present = append(present, s)
		}
	}
	action := map[string]string{}
	orig := map[string]int{}
	total := 0
	for _, s := range present {
		orig[s.Name] = len(render(s))
		total += orig[s.Name]
		action[s.Name] = "kept"
	}
	// First cut: each optional section, in drop order, gives up what is
	// over the budget but keeps at least MinKeep bytes of its body.
	for _, name := range DropOrder {
		s, ok := byName[name]
		if total <= budget || !ok || s.Required {
			continue
		}
		size := len(render(s))
		keep := max(MinKeep, size-(total-budget)-len(s.Heading)-2-cutMarkerLen)
		if keep >= len(s.Body) {
			continue
		}
		s.Body = cut(s.Body, keep, name == Failure)
		action[name] = "cut"
		total += len(render(s)) - size
	}
	// Then drop: whole sections, in drop order, until the prompt fits.
	for _, name := range DropOrder {
		s, ok := byName[name]
		if total <= budget || !ok || s.Required {
			continue
		}
		total -= len(render(s))
		action[name] = "dropped"
	}
	var b strings.Builder
	for _, s := range present {
		if action[s.Name] == "dropped" {
			fits = append(fits, Fit{Name: s.Name, Original: orig[s.Name], Action: "dropped"})
			continue
		}
		r := render(s)
		b.WriteString(r)
		fits = append(fits, Fit{Name: s.Name, Bytes: len(r), Original: orig[s.Name], Action: action[s.Name]})
	}
	if b.Len() > budget {
		over = b.Len() - budget
	}
	return []byte(b.String()), fits, over
}

// render is a section as it appears: heading, blank line, body, blank line.
func render(s *Section) string {
	body := strings.TrimRight(s.Body, "\n")
	return s.Heading + "\n\n" + body + "\n\n"
}

// cutMarkerLen bounds the length of the marker cut adds.
const cutMarkerLen = 64

// cut shortens body to at most keep bytes plus a marker line, on a UTF-8
// and, where possible, a line boundary; tail keeps the end instead of the
// beginning.
func cut(body string, keep int, tail bool) string {
	if len(body) <= keep {
		return body
	}
	if tail {
		s := body[len(body)-keep:]
		for len(s) > 0 && !utf8.RuneStart(s[0]) {
			s = s[1:]
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)/4 {
			s = s[i+1:]
		}
		return marker(len(body)-len(s)) + s
	}
	i := keep
	for i > 0 && !utf8.RuneStart(body[i]) {
		i--
	}
	s := body[:i]
	if i := strings.LastIndexByte(s, '\n'); i >= 0 && i > len(s)*3/4 {
		s = s[:i+1]
	}
	return strings.TrimRight(s, "\n") + "\n" + marker(len(body)-len(s))
}

func marker(n int) string {
	return fmt.Sprintf("[… %d bytes cut to fit prompt_budget_bytes]\n", n)
}

// Fence is a Markdown code fence for s: backticks, one more than the
// longest run of them in s (three at least), so s cannot close it.
func Fence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
