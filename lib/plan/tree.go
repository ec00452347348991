package plan

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/treeloop/treeloop/lib/internal/lazyre"
	"github.com/treeloop/treeloop/lib/tree"
)

// The schema's bounds (schemas/task_tree.v1.schema.json) a plan's text is
// held to.
const (
	maxTitle     = 256
	maxGoal      = 16384
	maxCriteria  = 64
	maxCriterion = 4096
	maxChildren  = 10000
)

// bigSection is the size, in words, of a leaf section without acceptance
// criteria that is worked in decompose mode: a chunk of prose, not a
// step.
const bigSection = 150

// Tree builds the task tree of the plan: the root's id is rootID and its
// descendants' "<parent>.<n>" (as the runner's decompositions make them),
// in order 1..n; passes false, attempts 0, max_attempts maxAttempts. An
// inner node is next=decompose (the plan decomposed it); a leaf is
// execute, but a section of more than 150 words of prose and no criteria,
// which is decompose. Text beyond the schema's bounds is cut and children
// and criteria beyond them are left out; each is reported in p.Rejected.
// Checked items are open nodes like the others (only a green guard passes
// a node): p.Assumptions lists them. A title ending in "(evidence: suite)"
// or "(evidence: witness)" sets the node's evidence, the operator's
// choice, and loses the mark.
func (p *Plan) Tree(rootID string, maxAttempts int) (*tree.Node, error) {
	if !tree.ValidID(rootID) {
		return nil, fmt.Errorf("root id %q does not match %s", rootID, tree.IDPattern)
	}
	if maxAttempts < 1 || maxAttempts > tree.MaxAttemptsLimit {
		return nil, fmt.Errorf("max_attempts must be 1 to %d, got %d", tree.MaxAttemptsLimit, maxAttempts)
	}
	root := p.node(p.Root, rootID, 0, maxAttempts)
	var attach func(n *tree.Node, it *Item)
	attach = func(n *tree.Node, it *Item) {
		kids := it.Children
		if len(kids) > maxChildren {
			for _, c := range kids[maxChildren:] {
				p.reject(c.Line, c.Title, fmt.Sprintf("more than %d children under one node", maxChildren))
			}
			kids = kids[:maxChildren]
		}
		ids := tree.ChildIDs(root, n.ID, len(kids))
		for i, c := range kids {
			cn := p.node(c, ids[i], int64(i+1), maxAttempts)
			n.Children = append(n.Children, cn)
			attach(cn, c)
		}
		if len(n.Children) > 0 {
			n.Next = tree.NextDecompose
		}
	}
	attach(root, p.Root)
	slices.SortStableFunc(p.Rejected, func(a, b Note) int { return a.Line - b.Line })
	slices.SortStableFunc(p.Assumptions, func(a, b Note) int { return a.Line - b.Line })
	data := tree.Encode(root)
	if _, ps := tree.Load(data); len(ps) > 0 {
		return nil, fmt.Errorf("the imported tree is invalid: %v", ps)
	}
	return root, nil
}

// node is one item as a node without its children, its text within the
// schema's bounds.
func (p *Plan) node(it *Item, id string, order int64, maxAttempts int) *tree.Node {
	title, goal := strings.TrimSpace(it.Title), strings.TrimSpace(it.Goal)
	title, level := evidenceMark(title)
	if title == "" {
		title = fmt.Sprintf("Line %d", it.Line)
	}
	if utf8.RuneCountInString(title) > maxTitle {
		goal = joinText(title, goal)
		title = string([]rune(title)[:maxTitle-1]) + "…"
	}
	if utf8.RuneCountInString(goal) > maxGoal {
		p.reject(it.Line, title, fmt.Sprintf("the text is cut to the %d characters a goal holds", maxGoal))
		goal = string([]rune(goal)[:maxGoal])
	}
	acc := []string{}
	for i, a := range it.Acceptance {
		if i >= maxCriteria {
			p.reject(it.Line, a, fmt.Sprintf("more than %d acceptance criteria on %q", maxCriteria, title))
			continue
		}
		if utf8.RuneCountInString(a) > maxCriterion {
			p.reject(it.Line, a, fmt.Sprintf("an acceptance criterion cut to %d characters", maxCriterion))
			a = string([]rune(a)[:maxCriterion])
		}
		acc = append(acc, a)
	}
	next := tree.NextExecute
	if it.Section && len(acc) == 0 && len(strings.Fields(goal)) > bigSection {
		next = tree.NextDecompose
	}
	return &tree.Node{ID: id, Order: order, Title: title, Goal: goal, Acceptance: acc, Next: next, MaxAttempts: maxAttempts, Evidence: level, Children: []*tree.Node{}}
}

// evidenceMarkRe is the plan's way to set a node's evidence (DESIGN.md
// decision 24), at the end of its title: "(evidence: suite)" or
// "[evidence: witness]".
var evidenceMarkRe = lazyre.New(`\s*[(\[]evidence:\s*(suite|witness)[)\]]\s*$`)

// evidenceMark is title without its evidence mark, and the level the mark
// sets ("" when it has none).
func evidenceMark(title string) (string, string) {
	m := evidenceMarkRe().FindStringSubmatchIndex(title)
	if m == nil || m[0] == 0 {
		return title, ""
	}
	return title[:m[0]], title[m[2]:m[3]]
}

// Outline is the tree for a reader (tree-import --dry-run): one line per
// node, indented by depth, with its id, next and title, then its
// acceptance criteria and the first line of its goal; then the
// assumptions and the rejected lines, each with its line number.
func (p *Plan) Outline(root *tree.Node) string {
	var b strings.Builder
	var walk func(n *tree.Node, depth int)
	walk = func(n *tree.Node, depth int) {
		in := strings.Repeat("  ", depth)
		fmt.Fprintf(&b, "%s%s  %s  %s\n", in, n.ID, n.Next, n.Title)
		if g, _, _ := strings.Cut(strings.TrimSpace(n.Goal), "\n"); g != "" {
			if utf8.RuneCountInString(g) > 100 {
				g = string([]rune(g)[:99]) + "…"
			}
			fmt.Fprintf(&b, "%s    goal: %s\n", in, g)
		}
		for _, a := range n.Acceptance {
			fmt.Fprintf(&b, "%s    acceptance: %s\n", in, a)
		}
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(root, 0)
	for _, a := range p.Assumptions {
		fmt.Fprintf(&b, "assumption: line %d: %s (checked in the plan: not passed, the guard decides)\n", a.Line, a.Text)
	}
	for _, r := range p.Rejected {
		fmt.Fprintf(&b, "rejected: line %d: %s: %s\n", r.Line, r.Reason, r.Text)
	}
	return b.String()
}

// AssumptionsMarkdown is the assumptions as lines to append to
// .runner/state/assumptions.md ("" when none): each checked item of the
// plan, which the plan says is done and the guard has not yet confirmed.
func (p *Plan) AssumptionsMarkdown(source string) string {
	if len(p.Assumptions) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## Checked in the plan (%s)\n\nThe plan marks these done; their nodes are open until the guard passes them.\n\n", source)
	for _, a := range p.Assumptions {
		fmt.Fprintf(&b, "- %s (line %d)\n", a.Text, a.Line)
	}
	return b.String()
}
