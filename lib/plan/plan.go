// Package plan turns a plan a user already has into a task tree
// (tree-import, runner-init --plan): a Markdown checklist or heading
// outline, a PRD with numbered requirements, spec-kit's tasks.md, ralph's
// prd.json, or a GitHub issue's JSON (gh issue view --json title,body).
// Nested items become children in order, acceptance criteria come from
// sub-bullets and "Acceptance" sections, each node gets its next, and a
// checked item is not passed (only a green guard passes a node) but listed
// as an assumption. Pure and deterministic: the same bytes give the same
// tree, and every line left out is reported with its number.
package plan

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/treeloop/treeloop/lib/tree"
)

// The formats Parse reads.
const (
	FormatAuto        = "auto"
	FormatMarkdown    = "markdown"
	FormatPRDJSON     = "prd-json"
	FormatGitHubIssue = "github-issue"
)

// Formats lists the formats a caller may name.
var Formats = []string{FormatAuto, FormatMarkdown, FormatPRDJSON, FormatGitHubIssue}

// Item is one piece of work of a plan: a section, a list item, a story.
type Item struct {
	Title      string
	Goal       string
	Acceptance []string
	Checked    bool // a checked checklist item: done, says the plan
	Section    bool // a heading's section, not a list item
	Line       int  // where it starts (1-based; for an issue, in its body)
	Children   []*Item
}

// Note is a line of the plan the tree does not hold as it is: an
// assumption (a checked item) or a rejected line, with why.
type Note struct {
	Line   int    `json:"line"`
	Text   string `json:"text"`
	Reason string `json:"reason,omitempty"`
}

// Plan is a parsed plan: its root item, the assumptions (checked items)
// and the rejected lines, both in line order.
type Plan struct {
	Format      string
	Root        *Item
	Assumptions []Note
	Rejected    []Note
}

// Parse reads data in format (FormatAuto: JSON with userStories is a
// prd.json, JSON with title and body a GitHub issue, anything else
// Markdown). title names the root when the plan has none (a checklist
// without a heading); "" means "Plan". An error means nothing could be
// read: not UTF-8, JSON of an unknown shape, a plan with no work in it.
func Parse(data []byte, format, title string) (Plan, error) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		data = data[3:]
	}
	if !utf8Valid(data) {
		return Plan{}, errors.New("the plan is not UTF-8 text")
	}
	if title == "" {
		title = "Plan"
	}
	if format == FormatAuto || format == "" {
		format = detect(data)
	}
	var p Plan
	var err error
	switch format {
	case FormatMarkdown:
		p = parseMarkdown(string(data), title, 0)
	case FormatPRDJSON:
		p, err = parsePRD(data, title)
	case FormatGitHubIssue:
		p, err = parseIssue(data)
	default:
		return Plan{}, fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
	if err != nil {
		return Plan{}, err
	}
	p.Format = format
	if p.Root == nil {
		return Plan{}, errors.New("the plan holds no work: no heading, list item, text or story")
	}
	return p, nil
}

// detect names the format of data.
func detect(data []byte) string {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return FormatMarkdown
	}
	switch {
	case bytes.Contains(t, []byte(`"userStories"`)):
		return FormatPRDJSON
	case bytes.Contains(t, []byte(`"body"`)) && bytes.Contains(t, []byte(`"title"`)):
		return FormatGitHubIssue
	}
	return FormatMarkdown
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "\uFFFD") == string(b) }

// reject records a line the tree leaves out, its text on one line and at
// most 200 bytes.
func (p *Plan) reject(line int, text, reason string) {
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > 200 {
		text = strings.ToValidUTF8(text[:200], "") + "…"
	}
	p.Rejected = append(p.Rejected, Note{Line: line, Text: text, Reason: reason})
}

// assume records a checked item as an assumption.
func (p *Plan) assume(it *Item) {
	p.Assumptions = append(p.Assumptions, Note{Line: it.Line, Text: it.Title})
}

// Import parses a plan and builds its tree (Parse, then Tree): what
// tree-import prints and runner-init --plan writes.
func Import(data []byte, format, title, rootID string, maxAttempts int) (Plan, *tree.Node, error) {
	p, err := Parse(data, format, title)
	if err != nil {
		return p, nil, err
	}
	root, err := p.Tree(rootID, maxAttempts)
	return p, root, err
}
