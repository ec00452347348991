package plan

import (
	"strings"

	"github.com/treeloop/treeloop/lib/internal/lazyre"
)

// A Markdown plan is read line by line into sections (headings) holding
// prose and list entries; list entries nest by indentation. Then:
//
//   - A task is a checklist item ("- [ ]", "- [x]"), a numbered item
//     ("1.") or a bullet that opens with a requirement id ("**FR-001**:").
//     When the plan has tasks, they are the work: a section becomes a node
//     only when tasks are under it, and the other sections' text is
//     context, kept in the root's goal. A plan without tasks is an
//     outline: every section is a node, and its top-level bullets too.
//   - Under a task, nested tasks are children and plain bullets are
//     acceptance criteria; so are the items of a section titled
//     "Acceptance", "Acceptance criteria", "Done when" (and the like), and
//     the list after such a label line ("**Acceptance**:").
//   - The one top-level heading, when there is one, is the root; else the
//     root is named by the caller (title) and holds every top section, or
//     is the one top-level item of a plan without headings.

// mdSection is a heading's section while the plan is read.
type mdSection struct {
	title   string
	level   int
	line    int
	prose   []string
	acc     []string
	accOnly bool // an "Acceptance" section: all of it is its parent's acceptance
	parts   []mdPart
	parent  *mdSection
}

// mdPart is a section's child: a list entry or a subsection, in order.
type mdPart struct {
	entry *mdEntry
	sub   *mdSection
}

// mdEntry is one list entry.
type mdEntry struct {
	text     string
	line     int
	indent   int // the marker's column
	content  int // the text's column
	task     bool
	checked  bool
	cont     []string // continuation lines: the entry's goal
	acc      []string
	children []*mdEntry
}

var (
	headingRE = lazyre.New(`^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$`)
	itemRE    = lazyre.New(`^([ \t]*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$`)
	boxRE     = lazyre.New(`^\[([ xX])\](?:[ \t]+(.*))?$`)
	reqRE     = lazyre.New(`^\**(?:[A-Z]{1,6}-?\d{1,5}(?:\.\d+)*)\**\s*[:.)\-]`)
	labelRE   = lazyre.New(`(?i)^\**\s*(acceptance(?:\s+(?:criteria|scenarios|tests))?|done\s+when|definition\s+of\s+done|success\s+criteria|independent\s+test|checkpoint|verification)\s*\**\s*:\s*\**\s*(.*)$`)
	accTitle  = lazyre.New(`(?i)^(acceptance(\s+(criteria|scenarios|tests))?|done\s+when|definition\s+of\s+done|success\s+criteria)\s*:?$`)
	ruleRE    = lazyre.New(`^[ \t]*([-*_=])([ \t]*[-*_=]){2,}[ \t]*$`)
	fenceRE   = lazyre.New("^[ \t]*(```|~~~)")
	specP     = lazyre.New(`\s*\[P\]`)
)

// mdReader holds the state of reading one document.
type mdReader struct {
	p       *Plan
	offset  int // added to line numbers (an issue's body: 0)
	root    *mdSection
	cur     *mdSection
	open    []*mdEntry // the open list entries, outermost first
	acc     *[]string  // where a label's list goes, nil when none
	accIn   int        // the label's indent
	fence   string
	fenceTo *[]string // where a fenced block's lines go
	comment bool
}

// parseMarkdown reads text; title names a root the document lacks.
func parseMarkdown(text, title string, offset int) Plan {
	p := &Plan{}
	r := &mdReader{p: p, offset: offset, root: &mdSection{level: 0}}
	r.cur = r.root
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	start := r.frontMatter(lines)
	for i := start; i < len(lines); i++ {
		r.line(i+1+offset, lines[i])
	}
	p.Root = r.build(title)
	return *p
}

// frontMatter rejects a YAML front matter block and returns the index of
// the first line after it.
func (r *mdReader) frontMatter(lines []string) int {
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return 0
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			for j := 0; j <= i; j++ {
				if s := strings.TrimSpace(lines[j]); s != "" && s != "---" {
					r.p.reject(j+1+r.offset, lines[j], "front matter: metadata, not work")
				}
			}
			return i + 1
		}
	}
	return 0
}

// line reads one line.
func (r *mdReader) line(n int, raw string) {
	s := strings.TrimRight(raw, " \t")
	switch {
	case r.fence != "":
		if fenceRE().MatchString(s) && strings.HasPrefix(strings.TrimSpace(s), r.fence) {
			r.fence = ""
		}
		*r.fenceTo = append(*r.fenceTo, s)
		return
	case r.comment || strings.HasPrefix(strings.TrimSpace(s), "<!--"):
		r.comment = !strings.Contains(s, "-->")
		r.p.reject(n, raw, "HTML comment")
		return
	case fenceRE().MatchString(s):
		r.fence = fenceRE().FindStringSubmatch(s)[1]
		r.text(n, raw, true)
		r.fenceTo = &r.cur.prose
		if len(r.open) > 0 {
			r.fenceTo = &r.open[len(r.open)-1].cont
		}
		return
	case strings.TrimSpace(s) == "":
		return
	case ruleRE().MatchString(s):
		return // a thematic break or a setext underline: formatting, not content
	}
	if m := headingRE().FindStringSubmatch(s); m != nil {
		r.heading(n, len(m[1]), m[2])
		return
	}
	if m := itemRE().FindStringSubmatch(s); m != nil {
		r.item(n, columns(m[1]), len(m[1])+len(m[2])+1, m[2], m[3])
		return
	}
	r.text(n, raw, false)
}

// columns is the width of indentation, a tab counting four.
func columns(ws string) int {
	return len(ws) + 3*strings.Count(ws, "\t")
}

// heading opens a section under the nearest enclosing one.
func (r *mdReader) heading(n, level int, title string) {
	r.open, r.acc = nil, nil
	parent := r.cur
	for parent != r.root && parent.level >= level {
		parent = parent.parent
	}
	title = cleanTitle(title)
	sec := &mdSection{title: title, level: level, line: n, parent: parent, accOnly: accTitle().MatchString(title)}
	parent.parts = append(parent.parts, mdPart{sub: sec})
	r.cur = sec
}

// item reads a list entry.
func (r *mdReader) item(n, indent, content int, marker, text string) {
	checked, task, raw := false, false, marker+" "+text
	if m := boxRE().FindStringSubmatch(text); m != nil {
		checked, task, text = m[1] != " ", true, m[2]
	}
	if marker[0] >= '0' && marker[0] <= '9' || reqRE().MatchString(text) {
		task = true
	}
	for len(r.open) > 0 && r.open[len(r.open)-1].indent >= indent {
		r.open = r.open[:len(r.open)-1]
	}
	if r.acc != nil && indent >= r.accIn {
		*r.acc = append(*r.acc, cleanText(text))
		return
	}
	r.acc = nil
	if strings.TrimSpace(text) == "" {
		r.p.reject(n, raw, "empty list item")
		return
	}
	e := &mdEntry{text: text, line: n, indent: indent, content: content, task: task, checked: checked}
	if len(r.open) > 0 {
		parent := r.open[len(r.open)-1]
		parent.children = append(parent.children, e)
	} else {
		r.cur.parts = append(r.cur.parts, mdPart{entry: e})
	}
	r.open = append(r.open, e)
}

// text reads a line of prose: a label line (not when verbatim, a fence's
// opening line), an entry's continuation or the section's text.
func (r *mdReader) text(n int, raw string, verbatim bool) {
	indent := columns(raw[:len(raw)-len(strings.TrimLeft(raw, " \t"))])
	s := strings.TrimSpace(raw)
	if !verbatim {
		if m := labelRE().FindStringSubmatch(s); m != nil {
			target := &r.cur.acc
			if len(r.open) > 0 && indent >= r.open[len(r.open)-1].content {
				target = &r.open[len(r.open)-1].acc
			}
			// "Label: text" is one criterion; "Label:" alone opens a list
			// of them.
			if rest := strings.TrimSpace(m[2]); rest != "" {
				*target = append(*target, cleanText(rest))
			} else {
				r.acc, r.accIn = target, indent
			}
			return
		}
	}
	r.acc = nil
	if len(r.open) > 0 && indent >= r.open[len(r.open)-1].content {
		e := r.open[len(r.open)-1]
		e.cont = append(e.cont, strings.TrimRight(raw, " \t"))
		return
	}
	r.open = nil
	r.cur.prose = append(r.cur.prose, strings.TrimRight(raw, " \t"))
}

// cleanTitle is a heading's or an item's text as a title: bold markers
// and spec-kit's [P] (parallel) marker dropped, spaces collapsed.
func cleanTitle(s string) string {
	s = specP().ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "**", "")
	return cleanText(s)
}

// cleanText collapses spaces and drops emphasis wrapping the whole text.
func cleanText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, w := range []string{"**", "__"} {
		if len(s) > 2*len(w) && strings.HasPrefix(s, w) && strings.HasSuffix(s, w) && !strings.Contains(s[len(w):len(s)-len(w)], w) {
			s = s[len(w) : len(s)-len(w)]
		}
	}
	return s
}
