// Package goal reads and writes .runner/GOAL.md: Markdown with an optional
// YAML front matter block whose `id` key holds the run id (seed 000 §10).
// Only the `id` line is interpreted; every other line is kept verbatim.
package goal

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/treeloop/treeloop/lib/plan"
)

const fence = "---"

// Doc is a parsed GOAL.md.
type Doc struct {
	Front []string // front matter lines, without the fences
	Body  []byte   // everything after the front matter
	has   bool
}

// Parse splits data into front matter and body. A document that does not
// start with a "---" line has no front matter.
func Parse(data []byte) (Doc, error) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	first, rest, ok := bytes.Cut(data, []byte("\n"))
	if strings.TrimRight(string(first), "\r ") != fence {
		return Doc{Body: data}, nil
	}
	if !ok {
		return Doc{}, fmt.Errorf("front matter not closed: add a line with --- after it")
	}
	var lines []string
	for len(rest) > 0 || ok {
		var line []byte
		line, rest, ok = bytes.Cut(rest, []byte("\n"))
		if strings.TrimRight(string(line), "\r ") == fence {
			return Doc{Front: lines, Body: rest, has: true}, nil
		}
		lines = append(lines, string(line))
		if !ok {
			break
		}
	}
	return Doc{}, fmt.Errorf("front matter not closed: add a line with --- after it")
}

// ID returns the front matter's id, "" when absent.
func (d Doc) ID() string {
	for _, l := range d.Front {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "id" {
			v = strings.TrimSpace(v)
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

// SetID sets (or adds) the id line of the front matter.
func (d *Doc) SetID(id string) {
	d.has = true
	for i, l := range d.Front {
		if k, _, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "id" {
			d.Front[i] = "id: " + id
			return
		}
	}
	d.Front = append([]string{"id: " + id}, d.Front...)
}

// Bytes renders the document.
func (d Doc) Bytes() []byte {
	if !d.has {
		return d.Body
	}
	var b bytes.Buffer
	b.WriteString(fence + "\n")
	for _, l := range d.Front {
		b.WriteString(l + "\n")
	}
	b.WriteString(fence + "\n")
	b.Write(d.Body)
	return b.Bytes()
}

// Title is the text of the body's first "# " heading, "" when none.
func (d Doc) Title() string {
	for _, l := range strings.Split(string(d.Body), "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// Template is the GOAL.md runner-init writes when it is given none. Its
// heading marks it: runner-start refuses to start a run on it (Root).
const Template = "# " + templateTitle + `

Say what the finished work does and how to tell it is done. The first
"# " heading becomes the root node's title; this text becomes its goal,
and the items of a "## Acceptance" section its acceptance criteria.
`

const templateTitle = "Describe the goal in one line"

// Limits of the root node taken from GOAL.md (the task tree schema's
// title and goal lengths).
const (
	MaxTitle = 256
	MaxGoal  = 16384
)

// ErrTemplate is Root's error for the untouched template.
var ErrTemplate = errors.New("it still holds the template: replace its heading with your goal in one line and its text with what done means")

// Root is the root node's title, goal and acceptance (seed 000 preamble):
// the first "# " heading is the title (cut to MaxTitle bytes), the text
// under it the goal; a heading alone is both. A section right under the
// heading titled Acceptance (or Acceptance criteria, Done when, Definition
// of done, Success criteria) gives the acceptance criteria, one per list
// item, as tree-import reads a plan's root (lib/plan GoalAcceptance), and
// is left out of the goal; acceptance is empty (not nil) without one. It
// fails on the template (ErrTemplate, with the title and goal it would
// give), on a document with no goal text, on a goal longer than MaxGoal
// bytes and on criteria beyond the schema's bounds.
func (d Doc) Root() (title, body string, acceptance []string, err error) {
	title = d.Title()
	if title == "" {
		title = "Goal"
	}
	if len(title) > MaxTitle {
		title = strings.ToValidUTF8(title[:MaxTitle], "")
	}
	text, acceptance, err := plan.GoalAcceptance(string(d.Body))
	if err != nil {
		return "", "", nil, err
	}
	if acceptance == nil {
		acceptance = []string{}
	}
	body = strings.TrimSpace(text)
	if first, rest, _ := strings.Cut(body, "\n"); strings.HasPrefix(first, "# ") {
		body = strings.TrimSpace(rest)
		if body == "" {
			body = title
		}
	}
	switch {
	case body == "":
		return "", "", nil, errors.New("it has no goal text: write a \"# \" heading with the goal in one line, then what done means")
	case len(body) > MaxGoal:
		return "", "", nil, fmt.Errorf("it is %d bytes; the root goal holds at most %d: shorten it and put details in the root's context file", len(body), MaxGoal)
	case title == templateTitle:
		return title, body, acceptance, ErrTemplate
	}
	return title, body, acceptance, nil
}

// RemoveID drops the front matter's id line (a new goal gets a new run id).
func (d *Doc) RemoveID() {
	for i, l := range d.Front {
		if k, _, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "id" {
			d.Front = append(d.Front[:i], d.Front[i+1:]...)
			return
		}
	}
}
