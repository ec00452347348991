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
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
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

// Evidence is what the iteration that passed a node recorded: from the
// run's local logs (.runner/iterations/<run>/<iter>/) where they are
// kept, else what its loop commit's trailers keep (Trailers).
type Evidence struct {
	Meta      iterdir.Meta
	Guard     *iterdir.Guard // nil when guard.json is missing, or without logs
	GuardTail string
	// Cited is the pass's tests by name in brief (lib/evidence words
	// it); nil when the guard reported none.
	Cited *iterdir.Cited
	// Trailers: the logs are not here; Cited comes from the loop
	// commit's Treeloop-Evidence and Treeloop-Witness trailers.
	Trailers bool
}

// Body is what the pull-request body says.
type Body struct {
	Plan     Plan
	Exported Result
	// Evidence by node id, for every step: from the iteration logs that
	// are here and name the commit that passed the node, else from the
	// loop commit's trailers.
	Evidence map[string]Evidence
	// Changes are what each passed leaf changed, by node id.
	Changes map[string]Changes
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
	// TestGlobs are [guard] test_files of the tip's configuration (its
	// default when the tip has none that reads): which files are tests.
	TestGlobs []string
}

// ReadBody gathers the body of p's export res: the notes, the
// configuration's test files and the changes from git, the evidence and
// usage from runDir (.runner/iterations/<run>; where its logs are
// missing, the evidence from the loop commits' trailers).
func ReadBody(repo *git.Repo, p Plan, res Result, runDir string) (Body, error) {
	b := Body{Plan: p, Exported: res, Evidence: map[string]Evidence{}}
	files, err := repo.ShowFiles(git.File{Rev: p.Tip, Path: layout.Assumptions}, git.File{Rev: p.Tip, Path: layout.Questions}, git.File{Rev: p.Tip, Path: layout.Config})
	if err != nil {
		return b, err
	}
	b.Assumptions, b.Questions = notes(textclean.StripANSI(string(files[0].Data))), notes(textclean.StripANSI(string(files[1].Data)))
	b.TestGlobs = config.DefaultTestFiles
	if files[2].OK {
		if cfg, err := config.Parse(layout.Config, files[2].Data); err == nil {
			b.TestGlobs = cfg.Guard.TestFiles
		}
	}
	if b.Artifacts, err = artifacts.AtCommit(repo, p.Tip); err != nil {
		return b, fmt.Errorf("list the nodes' artifacts: %w", err)
	}
	if b.Changes, err = readChanges(repo, p, b.TestGlobs); err != nil {
		return b, fmt.Errorf("list what each node changed: %w", err)
	}
	if err := b.readLogs(runDir); err != nil {
		return b, err
	}
	return b, b.readTrailers(repo)
}

// readLogs reads the rows, the usage and each step's evidence from the
// run's logs in runDir; none when it holds none.
func (b *Body) readLogs(runDir string) error {
	rows, err := iterdir.History(runDir, 0)
	if err != nil {
		return fmt.Errorf("read the iterations in %s: %w", runDir, err)
	}
	if len(rows) == 0 {
		return nil
	}
	b.Rows = rows
	u, err := iterdir.RunUsage(runDir)
	if err != nil {
		return fmt.Errorf("sum the run's usage: %w", err)
	}
	b.Usage = &u
	for _, s := range b.Plan.Steps {
		dir := filepath.Join(runDir, layout.IterName(s.Loop.Iter))
		var e Evidence
		if err := iterdir.Read(dir, iterdir.MetaFile, &e.Meta); err != nil || e.Meta.Commit != s.Loop.SHA {
			continue // not this iteration's log
		}
		var g iterdir.Guard
		if err := iterdir.Read(dir, iterdir.GuardFile, &g); err == nil {
			e.Guard, e.Cited = &g, g.Evidence.Cite()
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if data, err := fsutil.ReadFile(filepath.Join(dir, iterdir.GuardLog), "", 64<<20); err == nil {
			e.GuardTail = lastLines(textclean.StripANSI(string(data)), guardTailLines)
		}
		b.Evidence[s.Node.ID] = e
	}
	return nil
}

// readTrailers reads the evidence of each step whose log is not here
// from its loop commit's trailers: one git log for all of them.
func (b *Body) readTrailers(repo *git.Repo) error {
	var shas []string
	for _, s := range b.Plan.Steps {
		if _, ok := b.Evidence[s.Node.ID]; !ok {
			shas = append(shas, s.Loop.SHA)
		}
	}
	lines, err := repo.TrailerLines(shas, evidence.EvidenceTrailer, evidence.WitnessTrailer)
	if err != nil {
		return fmt.Errorf("read the loop commits' trailers: %w", err)
	}
	for _, s := range b.Plan.Steps {
		if _, ok := b.Evidence[s.Node.ID]; !ok {
			b.Evidence[s.Node.ID] = Evidence{Trailers: true, Cited: evidence.ParseTrailers(lines[s.Loop.SHA])}
		}
	}
	return nil
}

// readChanges reads from git what changesOf needs: each step's paths
// against the step before (one diff-tree), each commit's against its
// parent (one log) and the tip's paths (one ls-tree).
func readChanges(repo *git.Repo, p Plan, testGlobs []string) (map[string]Changes, error) {
	prev := p.BaseTree
	if prev == "" {
		prev = emptyTree(p.Tip)
	}
	pairs := make([][2]string, len(p.Steps))
	for i, s := range p.Steps {
		pairs[i], prev = [2]string{prev, s.Tree}, s.Tree
	}
	stepFiles, err := repo.DiffTrees(pairs)
	if err != nil {
		return nil, err
	}
	diff, err := repo.FirstParentChanges(p.Base, p.Tip)
	if err != nil {
		return nil, err
	}
	out, err := repo.Run("ls-tree", "-r", "-z", "--name-only", p.Tip)
	if err != nil {
		return nil, err
	}
	var tip []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && f != layout.Runner && !strings.HasPrefix(f, layout.Runner+"/") {
			tip = append(tip, f)
		}
	}
	return changesOf(changeInput{steps: p.Steps, commits: p.Commits, stepFiles: stepFiles, commitDiff: diff, tipFiles: tip, testGlobs: testGlobs}), nil
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
	b.writeChanges(&w)
	b.writeArtifacts(&w)
	b.writeIterations(&w)
	b.writeAnswers(&w)
	w.WriteString("\n### Assumptions\n\n" + orNone(b.Assumptions) + "\n")
	w.WriteString("\n### Open questions\n\n" + orNone(joinNotes(answer.Markdown(answer.Questions(p.Root)), b.Questions)) + "\n")
	// A reviewer reads it on a web page: no terminal escapes (the guard
	// logs' tails, the notes and the tree's text were cleaned where they
	// were read; this catches the rest).
	return textclean.StripANSI(w.String())
}

func (b Body) summary() string {
	n := len(b.Exported.Commits)
	s := fmt.Sprintf("%s, %s of the task tree passed by the guard", vocab.Plural(n, "commit", "commits"), vocab.Plural(len(b.Plan.Steps), "leaf", "leaves"))
	if k := b.noChange(); k > 0 {
		s += fmt.Sprintf(", %d of them with no code change", k)
	}
	return s
}

// noChange counts the passed leaves whose iterations changed no code.
func (b Body) noChange() int {
	k := 0
	for _, s := range b.Plan.Steps {
		if c, ok := b.Changes[s.Node.ID]; ok && c.NoCodeChange() {
			k++
		}
	}
	return k
}

// writeTree is the tree with each node's status, and for a passed leaf
// what its pass stands on and whether it changed code.
func (b Body) writeTree(w *strings.Builder) {
	w.WriteString("\n### Task tree\n\n")
	var walk func(n *tree.Node, depth int)
	walk = func(n *tree.Node, depth int) {
		box := " "
		if n.Passes {
			box = "x"
		}
		fmt.Fprintf(w, "%s- [%s] %s (`%s`): %s\n", strings.Repeat("  ", depth), box, inline(n.Title), n.ID, b.nodeState(n))
		for _, c := range ordered(n.Children) {
			walk(c, depth+1)
		}
	}
	walk(b.Plan.Root, 0)
}

// nodeState is a node's status in words, with its attempts when open; a
// passed leaf's with what its pass stands on (evidence.Said) and "no code
// change" when its iterations changed none.
func (b Body) nodeState(n *tree.Node) string {
	switch {
	case n.Passes && n.IsLeaf():
		s := string(vocab.NodePassed)
		if e, ok := b.Evidence[n.ID]; ok {
			s += ", " + evidence.Said(e.Cited)
		}
		if c, ok := b.Changes[n.ID]; ok && c.NoCodeChange() {
			s += ", no code change"
		}
		return s
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

// evidenceLegend says what the evidence column's words mean.
const evidenceLegend = "A pass is *" + "witnessed" + "* when a test the leaf added or changed failed on the code before its work and passed on the code after it, both run by the runner in a clean checkout (the witness tests are named); *suite only* when no witness was asked of it, by the operator's choice or as the agent that created the leaf proposed, and the suite passed; *" + evidence.NoTestsByName + "* when the guard reported no tests by name. The tests are counted from the guard's results by name: passed, failed, skipped, and how many of the tests that passed before passed again.\n"

// writeEvidence is the guard's verdict on each passed leaf.
func (b Body) writeEvidence(w *strings.Builder) {
	if len(b.Plan.Steps) == 0 {
		return
	}
	w.WriteString("\n### Guard evidence\n\n" + evidenceLegend + "\n")
	w.WriteString("| node | iteration | loop commit | guard | exit | time | tests | evidence |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	trailers := 0
	for _, s := range b.Plan.Steps {
		e := b.Evidence[s.Node.ID]
		guard, code, dur, tests := string(vocab.GuardPass), "", "", evidence.Counts(e.Cited)
		if e.Guard != nil {
			guard = code1(strings.Join(e.Guard.Argv, " ")) + ": " + e.Guard.Outcome
			code = fmt.Sprint(e.Guard.ExitCode)
			dur = iterdir.ShortDuration(e.Guard.DurationMS)
			if r := e.Guard.Ratchet; tests == "" && r != nil && r.Count >= 0 {
				tests = fmt.Sprintf("%d (the ratchet's count)", r.Count)
			}
		}
		if e.Trailers {
			trailers++
		}
		fmt.Fprintf(w, "| `%s` %s | %d | %s | %s | %s | %s | %s | %s |\n", s.Node.ID, cell(s.Node.Title), s.Loop.Iter, short(s.Loop.SHA), cell(guard), dash(code), dash(dur), dash(tests), cell(cites(e.Cited)))
	}
	for _, s := range b.Plan.Steps {
		e := b.Evidence[s.Node.ID]
		if e.GuardTail == "" {
			continue
		}
		fence := prompt.Fence(e.GuardTail)
		fmt.Fprintf(w, "\n<details><summary><code>%s</code>: the guard's last lines</summary>\n\n%stext\n%s\n%s\n\n</details>\n", s.Node.ID, fence, e.GuardTail, fence)
	}
	if trailers > 0 {
		fmt.Fprintf(w, "\nThe guard logs of %s are not in this checkout (%s/%s/): their evidence is what their loop commits' trailers (`%s`, `%s`) record.\n", vocab.Plural(trailers, "node", "nodes"), layout.Iterations, b.Plan.RunID, evidence.EvidenceTrailer, evidence.WitnessTrailer)
	}
}

// cites is a pass's evidence for the evidence column: what it stands on
// (evidence.Said), and a witnessed pass's witness tests.
func cites(c *iterdir.Cited) string {
	s := evidence.Said(c)
	if c == nil || c.Level != tree.EvidenceWitness || len(c.Witnesses)+c.Unlisted == 0 {
		return s
	}
	ws := make([]string, len(c.Witnesses))
	for i, t := range c.Witnesses {
		ws[i] = code1(t)
	}
	s += " by " + strings.Join(ws, ", ")
	if c.Unlisted > 0 {
		s += fmt.Sprintf(" and %d more", c.Unlisted)
	}
	return s
}

// changesLegend says how the changes are listed.
const changesLegend = "What each passed leaf changed outside `" + layout.Runner + "/` since the leaf passed before it: what its commit holds. A file is marked *test* when it matches `[guard] test_files`. A file is marked *not named by the leaf* when the leaf's title, goal or acceptance name files of the repository but not this one (a test file is never marked: a witness is a test of the leaf's own); a leaf that names no file states no scope to compare with. A file that none of the leaf's own iterations changed says which of the run's commits did.\n"

// writeChanges lists what each passed leaf changed, by file.
func (b Body) writeChanges(w *strings.Builder) {
	if len(b.Plan.Steps) == 0 {
		return
	}
	commits := map[string]string{}
	for _, c := range b.Exported.Commits {
		for _, id := range c.Nodes {
			commits[id] = c.Commit
		}
	}
	w.WriteString("\n### Changes by leaf\n\n" + changesLegend + "\n")
	for _, s := range b.Plan.Steps {
		c := b.Changes[s.Node.ID]
		fmt.Fprintf(w, "- `%s` %s: %s\n", s.Node.ID, inline(s.Node.Title), changeSummary(c, commits[s.Node.ID]))
		for _, f := range c.Files {
			fmt.Fprintf(w, "  - %s\n", fileLine(f, c.Named))
		}
	}
}

// changeSummary is a leaf's changes in one line: its commit, how many
// files and whether tests are among them, or why it has no commit.
func changeSummary(c Changes, commit string) string {
	var parts []string
	if c.NoCodeChange() {
		parts = append(parts, "no code change (its iterations changed nothing outside `"+layout.Runner+"/`)")
	}
	if len(c.Files) == 0 {
		if !c.NoCodeChange() {
			parts = append(parts, "its iterations' changes are in an earlier leaf's commit, or were undone")
		}
		return strings.Join(append(parts, "no commit"), "; ")
	}
	tests, others := c.Tests()
	kind := "test and other files"
	switch {
	case others == 0:
		kind = "test files only"
	case tests == 0:
		kind = "no test file"
	}
	what := fmt.Sprintf("%s, %s", vocab.Plural(len(c.Files), "file", "files"), kind)
	if commit != "" {
		what = "commit " + short(commit) + ", " + what
	} else {
		what = "no commit of its own (the branch it was exported onto already holds its change), " + what
	}
	return strings.Join(append(parts, what), "; ")
}

// fileLine is one file of a leaf's changes.
func fileLine(f FileChange, named []string) string {
	s := code1(f.Path) + " " + f.Status
	if f.Test {
		s += ", *test*"
	}
	if f.NotNamed {
		ns := make([]string, len(named))
		for i, n := range named {
			ns[i] = code1(n)
		}
		s += ", *not named by the leaf* (it names " + strings.Join(ns, ", ") + ")"
	}
	if len(f.By) > 0 {
		s += ", changed by " + strings.Join(f.By, ", ") + ", not by this leaf's iterations"
	}
	return s
}

// writeAnswers lists the operator's answers to the agent's questions, in
// the tree's order: each was in the prompts of its node and the node's
// descendants after it was given.
func (b Body) writeAnswers(w *strings.Builder) {
	var items []string
	var walk func(n *tree.Node)
	walk = func(n *tree.Node) {
		for _, a := range n.Answers {
			items = append(items, fmt.Sprintf("- %s (`%s`) asked:\n\n%s\n  The operator answered:\n\n%s", inline(n.Title), n.ID, quote(a.Question), quote(a.Answer)))
		}
		for _, c := range ordered(n.Children) {
			walk(c)
		}
	}
	walk(b.Plan.Root)
	w.WriteString("\n### Operator's answers\n\n")
	if len(items) == 0 {
		w.WriteString("None recorded.\n")
		return
	}
	w.WriteString("The operator's answers to the agent's questions (`tree-edit answer`), carried in the prompts of the node and its descendants after they were given:\n\n" + strings.Join(items, "\n"))
}

// quote is s as a Markdown quote inside a list item.
func quote(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString(strings.TrimRight("  > "+l, " ") + "\n")
	}
	return b.String()
}

// code1 is s on one line as a Markdown code span, delimited by more
// backticks than any run of them in s.
func code1(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	fence := prompt.Fence(s)
	if len(fence) == 3 && !strings.Contains(s, "`") {
		fence = "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
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
	case vocab.StatusBlocked:
		return string(vocab.ResultBlocked)
	case vocab.StatusPaused:
		return string(vocab.ResultPaused)
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
