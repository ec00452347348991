package export

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/answer"
	"github.com/treeloop/treeloop/lib/artifacts"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/prompt"
	"github.com/treeloop/treeloop/lib/textclean"
	"github.com/treeloop/treeloop/lib/tree"
	"github.com/treeloop/treeloop/lib/vocab"
)

// guardTailLines is how many of the guard log's last lines a node's
// evidence shows.
const guardTailLines = 15

// Evidence is what the iteration that passed a node recorded, from the
// run's local logs (.runner/iterations/<run>/<iter>/).
type Evidence struct {
	Meta      iterdir.Meta
	Guard     *iterdir.Guard // nil when guard.json is missing
	GuardTail string
}

// Body is what the pull-request body says.
type Body struct {
	Plan     Plan
	Exported Result
	// Evidence by node id, for the steps whose iteration logs are here
	// and name the commit that passed the node.
	Evidence map[string]Evidence
	// Rows are every iteration the logs hold; nil without logs (the
	// counts then come from the commit subjects).
	Rows  []iterdir.Row
	Usage *iterdir.Usage // nil without logs
	// Artifacts are the files each node's sessions saved
	// (.runner/nodes/<id>/artifacts/) as the tip holds them, by node id.
	Artifacts map[string][]artifacts.File
	// Assumptions and Questions are the agent's notes at the tip
	// (.runner/state/assumptions.md, questions.md), runner-init's
	// template line removed.
	Assumptions, Questions string
}

// ReadBody gathers the body of p's export res: the notes from the tip,
// the evidence and usage from runDir (.runner/iterations/<run>; missing
// logs leave them out).
func ReadBody(repo *git.Repo, p Plan, res Result, runDir string) (Body, error) {
	b := Body{Plan: p, Exported: res, Evidence: map[string]Evidence{}}
	files, err := repo.ShowFiles(git.File{Rev: p.Tip, Path: layout.Assumptions}, git.File{Rev: p.Tip, Path: layout.Questions})
	if err != nil {
		return b, err
	}
	b.Assumptions, b.Questions = notes(textclean.StripANSI(string(files[0].Data))), notes(textclean.StripANSI(string(files[1].Data)))
	if b.Artifacts, err = artifacts.AtCommit(repo, p.Tip); err != nil {
		return b, fmt.Errorf("list the nodes' artifacts: %w", err)
	}
	rows, err := iterdir.History(runDir, 0)
	if err != nil {
		return b, fmt.Errorf("read the iterations in %s: %w", runDir, err)
	}
	if len(rows) == 0 {
		return b, nil
	}
	b.Rows = rows
	u, err := iterdir.RunUsage(runDir)
	if err != nil {
		return b, fmt.Errorf("sum the run's usage: %w", err)
	}
	b.Usage = &u
	for _, s := range p.Steps {
		dir := filepath.Join(runDir, layout.IterName(s.Loop.Iter))
		var e Evidence
		if err := iterdir.Read(dir, iterdir.MetaFile, &e.Meta); err != nil || e.Meta.Commit != s.Loop.SHA {
			continue // not this iteration's log
		}
		var g iterdir.Guard
		if err := iterdir.Read(dir, iterdir.GuardFile, &g); err == nil {
			e.Guard = &g
		} else if !errors.Is(err, fs.ErrNotExist) {
			return b, err
		}
		if data, err := fsutil.ReadFile(filepath.Join(dir, iterdir.GuardLog), "", 64<<20); err == nil {
			e.GuardTail = lastLines(textclean.StripANSI(string(data)), guardTailLines)
		}
		b.Evidence[s.Node.ID] = e
	}
	return b, nil
}

// notes is an agent's notes file without runner-init's heading and
// template line; "" when nothing else is in it.
func notes(s string) string {
	var keep []string
	for i, l := range strings.Split(s, "\n") {
		if i < 3 && (strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "The agent may append")) {
			continue
		}
		keep = append(keep, l)
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Markdown is the pull-request body.
func (b Body) Markdown() string {
	var w strings.Builder
	p := b.Plan
	fmt.Fprintf(&w, "## %s\n\n", inline(p.Root.Title))
	if g := paragraph(p.Root.Goal); g != "" {
		w.WriteString(g + "\n\n")
	}
	fmt.Fprintf(&w, "Made by treeloop run `%s` (branch `%s`): %s.\n", p.RunID, p.Branch, b.summary())
	if len(p.Open) > 0 {
		fmt.Fprintf(&w, "\n**The run is not complete**: %s not passed and not in this branch.\n", vocab.Plural(len(p.Open), "leaf is", "leaves are"))
	}
	b.writeTree(&w)
	b.writeEvidence(&w)
	b.writeArtifacts(&w)
	b.writeIterations(&w)
	w.WriteString("\n### Assumptions\n\n" + orNone(b.Assumptions) + "\n")
	w.WriteString("\n### Open questions\n\n" + orNone(joinNotes(answer.Markdown(answer.Questions(p.Root)), b.Questions)) + "\n")
	// A reviewer reads it on a web page: no terminal escapes (the guard
	// logs' tails, the notes and the tree's text were cleaned where they
	// were read; this catches the rest).
	return textclean.StripANSI(w.String())
}

func (b Body) summary() string {
	n := len(b.Exported.Commits)
	return fmt.Sprintf("%s, %s of the task tree passed by the guard", vocab.Plural(n, "commit", "commits"), vocab.Plural(len(b.Plan.Steps), "leaf", "leaves"))
}

// writeTree is the tree with each node's status.
func (b Body) writeTree(w *strings.Builder) {
	w.WriteString("\n### Task tree\n\n")
	var walk func(n *tree.Node, depth int)
	walk = func(n *tree.Node, depth int) {
		box := " "
		if n.Passes {
			box = "x"
		}
		fmt.Fprintf(w, "%s- [%s] %s (`%s`): %s\n", strings.Repeat("  ", depth), box, inline(n.Title), n.ID, nodeState(n))
		for _, c := range ordered(n.Children) {
			walk(c, depth+1)
		}
	}
	walk(b.Plan.Root, 0)
}

// nodeState is a node's status in words, with its attempts when open.
func nodeState(n *tree.Node) string {
	switch {
	case n.Passes:
		return string(vocab.NodePassed)
	case !n.IsLeaf():
		return string(vocab.NodeOpen)
	case n.Attempts >= n.MaxAttempts:
		return fmt.Sprintf("%s (attempts %d/%d)", vocab.NodeStuck, n.Attempts, n.MaxAttempts)
	case n.IsWaiting():
		return fmt.Sprintf("%s (attempts %d/%d)", vocab.NodeWaiting, n.Attempts, n.MaxAttempts)
	}
	return fmt.Sprintf("%s (attempts %d/%d)", vocab.NodeOpen, n.Attempts, n.MaxAttempts)
}

// writeEvidence is the guard's verdict on each passed leaf.
func (b Body) writeEvidence(w *strings.Builder) {
	if len(b.Plan.Steps) == 0 {
		return
	}
	w.WriteString("\n### Guard evidence\n\n")
	w.WriteString("| node | iteration | loop commit | guard | exit | time | tests passed |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, s := range b.Plan.Steps {
		e, ok := b.Evidence[s.Node.ID]
		guard, code, dur, tests := string(vocab.GuardPass), "", "", ""
		if ok && e.Guard != nil {
			guard = "`" + cell(strings.Join(e.Guard.Argv, " ")) + "`: " + e.Guard.Outcome
			code = fmt.Sprint(e.Guard.ExitCode)
			dur = iterdir.ShortDuration(e.Guard.DurationMS)
			if r := e.Guard.Ratchet; r != nil && r.Count >= 0 {
				tests = fmt.Sprint(r.Count)
			}
		}
		fmt.Fprintf(w, "| `%s` %s | %d | %s | %s | %s | %s | %s |\n", s.Node.ID, cell(s.Node.Title), s.Loop.Iter, short(s.Loop.SHA), guard, dash(code), dash(dur), dash(tests))
	}
	for _, s := range b.Plan.Steps {
		e, ok := b.Evidence[s.Node.ID]
		if !ok || e.GuardTail == "" {
			continue
		}
		fence := prompt.Fence(e.GuardTail)
		fmt.Fprintf(w, "\n<details><summary><code>%s</code>: the guard's last lines</summary>\n\n%stext\n%s\n%s\n\n</details>\n", s.Node.ID, fence, e.GuardTail, fence)
	}
	if len(b.Evidence) < len(b.Plan.Steps) {
		fmt.Fprintf(w, "\nThe loop commits record each guard's outcome; the guard logs of %s are not in this checkout (%s/%s/).\n", vocab.Plural(len(b.Plan.Steps)-len(b.Evidence), "node", "nodes"), layout.Iterations, b.Plan.RunID)
	}
}

// writeArtifacts lists the files each node's sessions saved, in the
// tree's order; nothing when no node has any.
func (b Body) writeArtifacts(w *strings.Builder) {
	if len(b.Artifacts) == 0 {
		return
	}
	w.WriteString("\n### Artifacts\n\n")
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		for _, f := range b.Artifacts[n.ID] {
			fmt.Fprintf(w, "- `%s` %s: `%s/%s` (%d bytes)\n", n.ID, inline(n.Title), layout.NodeArtifacts(n.ID), f.Name, f.Bytes)
		}
		for _, c := range ordered(n.Children) {
			walk(c)
		}
	}
	walk(b.Plan.Root)
}

// writeIterations counts the run's iterations by node and result, and
// its usage.
func (b Body) writeIterations(w *strings.Builder) {
	type count struct {
		node  string
		n     int
		words map[string]int
	}
	var order []string
	counts := map[string]*count{}
	add := func(node, word string) {
		c := counts[node]
		if c == nil {
			c = &count{node: node, words: map[string]int{}}
			counts[node] = c
			order = append(order, node)
		}
		c.n++
		c.words[word]++
	}
	total := 0
	if b.Rows != nil {
		for _, r := range b.Rows {
			add(r.NodeID, r.Result)
			total++
		}
	} else {
		for _, c := range b.Plan.Commits {
			if c.Iter > 0 {
				add(c.Node, subjectResult(c))
				total++
			}
		}
	}
	fmt.Fprintf(w, "\n### Iterations\n\n%s", vocab.Plural(total, "iteration", "iterations"))
	if b.Usage != nil {
		u := b.Usage
		fmt.Fprintf(w, ", %d tokens in (%d cached), %d out, $%.4f", u.InputTokens, u.CachedTokens, u.OutputTokens, u.CostUSD)
	} else {
		w.WriteString(" (tokens and cost are in the run's local logs, not in this checkout)")
	}
	w.WriteString(".\n\n| node | iterations | results |\n| --- | --- | --- |\n")
	for _, id := range order {
		c := counts[id]
		words := make([]string, 0, len(c.words))
		for word, n := range c.words {
			words = append(words, fmt.Sprintf("%d %s", n, word))
		}
		slices.Sort(words)
		fmt.Fprintf(w, "| `%s` | %d | %s |\n", id, c.n, strings.Join(words, ", "))
	}
}

// subjectResult is an iteration's result as its commit subject tells it
// (an agent error reads as retry there: its status).
func subjectResult(c Commit) string {
	switch c.Status {
	case vocab.StatusDone:
		if c.Guard == vocab.GuardPass {
			return string(vocab.ResultPassed)
		}
		return string(vocab.ResultFailed)
	case vocab.StatusDecomposed:
		return string(vocab.ResultDecomposed)
	case vocab.StatusTimeout:
		return string(vocab.ResultTimeout)
	case vocab.StatusInterrupted:
		return string(vocab.ResultInterrupted)
	case vocab.StatusRunnerError:
		return string(vocab.ResultRunnerError)
	}
	return string(vocab.ResultRetry)
}

// inline is s on one line for Markdown text.
func inline(s string) string { return oneLine(s, "(untitled)") }

// cell is s for a table cell: one line, pipes escaped.
func cell(s string) string { return strings.ReplaceAll(oneLine(s, ""), "|", `\|`) }

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// joinNotes joins the non-empty notes with a blank line.
func joinNotes(notes ...string) string {
	var keep []string
	for _, n := range notes {
		if n = strings.TrimSpace(n); n != "" {
			keep = append(keep, n)
		}
	}
	return strings.Join(keep, "\n\n")
}

func orNone(s string) string {
	if s == "" {
		return "None recorded."
	}
	return s
}
