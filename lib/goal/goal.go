// Package goal reads and writes .runner/GOAL.md: Markdown with an optional
// YAML front matter block whose `id` key holds the run id (seed 000 §10).
// Only the `id` line is interpreted; every other line is kept verbatim.
package goal

import (
	"bytes"
	"fmt"
	"strings"
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
