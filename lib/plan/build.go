package plan

import (
	"strings"
)

// build turns the sections read into the plan's items.
func (r *mdReader) build(title string) *Item {
	tasks := hasTasks(r.root)
	b := &builder{p: r.p, tasks: tasks}
	top := r.root
	// The one top-level heading is the root, with whatever precedes it.
	var heads []*mdSection
	for _, pt := range top.parts {
		if pt.sub != nil {
			heads = append(heads, pt.sub)
		}
	}
	if len(heads) == 1 && !hasEntries(top) {
		h := heads[0]
		h.prose = append(top.prose, h.prose...)
		h.acc = append(top.acc, h.acc...)
		root := b.section(h)
		root.Goal = joinText(root.Goal, b.context)
		return root
	}
	// Without headings, the one top-level entry is the root.
	if len(heads) == 0 && len(top.parts) == 1 && len(top.prose) == 0 {
		if e := top.parts[0].entry; e != nil && (e.task || !tasks) {
			root := b.entry(e)
			root.Goal = joinText(root.Goal, b.context)
			return root
		}
	}
	top.title, top.line = title, 1
	root := b.section(top)
	root.Section = false
	root.Goal = joinText(root.Goal, b.context)
	if len(root.Children) == 0 && root.Goal == "" && len(root.Acceptance) == 0 {
		return nil
	}
	return root
}

// builder converts sections and entries, gathering the context (the text
// of sections that are not nodes) for the root's goal.
type builder struct {
	p       *Plan
	tasks   bool // the plan has tasks: only they, and sections above them, are nodes
	context string
}

// section is the item of a section that is a node.
func (b *builder) section(s *mdSection) *Item {
	it := &Item{Title: s.title, Goal: joinText(strings.Join(s.prose, "\n")), Acceptance: append([]string{}, s.acc...), Section: true, Line: s.line}
	for _, pt := range s.parts {
		switch {
		case pt.sub != nil && pt.sub.accOnly:
			it.Acceptance = append(it.Acceptance, accOf(pt.sub)...)
		case pt.sub != nil && (!b.tasks || hasTasks(pt.sub)):
			it.Children = append(it.Children, b.section(pt.sub))
		case pt.sub != nil:
			b.context = joinText(b.context, contextOf(pt.sub))
		case pt.entry.task || !b.tasks:
			it.Children = append(it.Children, b.entry(pt.entry))
		default:
			it.Goal = joinText(it.Goal, "- "+entryText(pt.entry))
		}
	}
	return it
}

// entry is the item of a list entry: nested tasks are its children,
// nested plain bullets its acceptance criteria.
func (b *builder) entry(e *mdEntry) *Item {
	title := cleanTitle(e.text)
	it := &Item{Title: title, Goal: strings.TrimSpace(dedent(e.cont)), Acceptance: append([]string{}, e.acc...), Checked: e.checked, Line: e.line}
	for _, c := range e.children {
		if c.task {
			it.Children = append(it.Children, b.entry(c))
		} else {
			it.Acceptance = append(it.Acceptance, flatten(c)...)
		}
	}
	if it.Checked {
		b.p.assume(it)
	}
	return it
}

// hasTasks reports whether a task is anywhere in s.
func hasTasks(s *mdSection) bool {
	for _, pt := range s.parts {
		if pt.sub != nil && !pt.sub.accOnly && hasTasks(pt.sub) || pt.entry != nil && entryHasTask(pt.entry) {
			return true
		}
	}
	return false
}

func entryHasTask(e *mdEntry) bool {
	if e.task {
		return true
	}
	for _, c := range e.children {
		if entryHasTask(c) {
			return true
		}
	}
	return false
}

// hasEntries reports whether s holds list entries of its own.
func hasEntries(s *mdSection) bool {
	for _, pt := range s.parts {
		if pt.entry != nil {
			return true
		}
	}
	return false
}

// accOf is everything an "Acceptance" section says, one criterion per
// list entry or paragraph line.
func accOf(s *mdSection) []string {
	out := append([]string{}, s.acc...)
	for _, l := range s.prose {
		if t := cleanText(l); t != "" {
			out = append(out, t)
		}
	}
	for _, pt := range s.parts {
		if pt.entry != nil {
			out = append(out, flatten(pt.entry)...)
		} else {
			out = append(out, accOf(pt.sub)...)
		}
	}
	return out
}

// flatten is an entry and its nested entries as criteria.
func flatten(e *mdEntry) []string {
	out := []string{cleanText(entryText(e))}
	for _, c := range e.children {
		out = append(out, flatten(c)...)
	}
	return out
}

// entryText is an entry's text with its continuation lines.
func entryText(e *mdEntry) string {
	t := e.text
	if len(e.cont) > 0 {
		t += " " + strings.Join(strings.Fields(strings.Join(e.cont, " ")), " ")
	}
	return t
}

// contextOf is a section's text as Markdown, kept as context.
func contextOf(s *mdSection) string {
	var b strings.Builder
	b.WriteString(strings.Repeat("#", max(s.level, 2)) + " " + s.title + "\n")
	if t := strings.TrimSpace(strings.Join(s.prose, "\n")); t != "" {
		b.WriteString("\n" + t + "\n")
	}
	for _, a := range s.acc {
		b.WriteString("\n" + a + "\n")
	}
	list := false
	for _, pt := range s.parts {
		if pt.entry != nil {
			if !list {
				b.WriteString("\n")
			}
			writeEntry(&b, pt.entry, 0)
		} else {
			b.WriteString("\n" + contextOf(pt.sub) + "\n")
		}
		list = pt.entry != nil
	}
	return strings.TrimSpace(b.String())
}

func writeEntry(b *strings.Builder, e *mdEntry, depth int) {
	b.WriteString(strings.Repeat("  ", depth) + "- " + entryText(e) + "\n")
	for _, c := range e.children {
		writeEntry(b, c, depth+1)
	}
}

// dedent removes the indentation the lines share.
func dedent(lines []string) string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		out[i] = l
	}
	return strings.Join(out, "\n")
}

// joinText joins non-empty texts with a blank line.
func joinText(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, "\n\n")
}
