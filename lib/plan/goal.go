package plan

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// GoalAcceptance reads a goal document (GOAL.md without its front matter)
// as tree-import reads the root of a plan: the sections right under the
// root titled Acceptance, Acceptance criteria, Done when, Definition of
// done or Success criteria (and the like: a plan's acceptance sections)
// give the root's acceptance criteria, one per list entry (nested entries
// too) or line of text. It returns the document without those sections
// (the goal's text; the document itself when it has none) and the
// criteria in order. A document with more than 64 criteria, or one longer
// than 4096 characters (the schema's bounds), is an error.
func GoalAcceptance(text string) (rest string, criteria []string, err error) {
	r := &mdReader{p: &Plan{}, root: &mdSection{level: 0}}
	r.cur = r.root
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, l := range lines {
		r.line(i+1, l)
	}
	var acc []*mdSection
	for _, pt := range goalRoot(r.root).parts {
		if pt.sub != nil && pt.sub.accOnly {
			acc = append(acc, pt.sub)
		}
	}
	if len(acc) == 0 {
		return text, nil, nil
	}
	drop := map[int]bool{}
	heads := headings(r.root)
	for _, s := range acc {
		criteria = append(criteria, accOf(s)...)
		end := len(lines)
		for _, h := range heads {
			if h.line > s.line && h.level <= s.level {
				end = h.line - 1
				break
			}
		}
		for n := s.line; n <= end; n++ {
			drop[n] = true
		}
	}
	var keep []string
	for i, l := range lines {
		if !drop[i+1] {
			keep = append(keep, l)
		}
	}
	criteria = nonEmpty(criteria)
	if len(criteria) > maxCriteria {
		return "", nil, fmt.Errorf("its acceptance section gives %d criteria; a node holds at most %d: keep the ones that decide when the goal is done", len(criteria), maxCriteria)
	}
	for _, c := range criteria {
		if utf8.RuneCountInString(c) > maxCriterion {
			return "", nil, fmt.Errorf("an acceptance criterion is longer than the %d characters a node holds: %.60s…", maxCriterion, c)
		}
	}
	return strings.Join(keep, "\n"), criteria, nil
}

// goalRoot is the section that is the root, as build takes it: the one
// top-level heading when there is one, no list before it and it is not an
// acceptance section itself, else the document itself.
func goalRoot(top *mdSection) *mdSection {
	var heads []*mdSection
	for _, pt := range top.parts {
		if pt.sub != nil {
			heads = append(heads, pt.sub)
		}
	}
	if len(heads) == 1 && !hasEntries(top) && !heads[0].accOnly {
		return heads[0]
	}
	return top
}

// headings are the sections under s, in document order.
func headings(s *mdSection) []*mdSection {
	var out []*mdSection
	for _, pt := range s.parts {
		if pt.sub != nil {
			out = append(out, pt.sub)
			out = append(out, headings(pt.sub)...)
		}
	}
	return out
}

// nonEmpty is criteria without the empty ones.
func nonEmpty(criteria []string) []string {
	out := criteria[:0]
	for _, c := range criteria {
		if strings.TrimSpace(c) != "" {
			out = append(out, c)
		}
	}
	return out
}
