// Package contextwrite is the context-write command (seed 000 §3.2, §5 steps
// 4-5, §8): it clears .runner/context/, writes goal.md, history.md (after an
// unsuccessful attempt on the same node) and failure.md (after a failed
// guard), and assembles the prompt pack for the iteration's mode into
// <iter>/prompt.md within prompt_budget_bytes (lib/prompt: fixed section
// order, documented drop order, required sections never dropped). Same
// inputs, same bytes: nothing here reads the clock.
package contextwrite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/treeloop/treeloop/lib/artifacts"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/goal"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/jsondoc"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/prompt"
	"github.com/treeloop/treeloop/lib/runstate"
	"github.com/treeloop/treeloop/lib/stepctx"
	"github.com/treeloop/treeloop/lib/textclean"
	"github.com/treeloop/treeloop/lib/tree"
)

// Options is the command line of context-write.
type Options struct {
	cli.Chdir
	Iter string `required:"" placeholder:"DIR" help:"The iteration directory (from iter-log begin); prompt.md is written there."`
	JSON bool   `name:"json" help:"Print the prompt's sections and what the budget did to them as JSON."`
	cli.Get
}

// Main runs context-write and returns its exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Run("context-write", "Clear and write .runner/context/ (goal.md, history.md, failure.md) and the iteration's prompt pack <iter>/prompt.md within prompt_budget_bytes. Exit 0 written, 6 runner error.", &Options{}, args, stdin, stdout, stderr)
}

// Context file names.
const (
	GoalFile    = "goal.md"
	HistoryFile = "history.md"
	FailureFile = "failure.md"
)

// maxSideFile bounds what is read of assumptions.md, questions.md and a
// sidecar; the budget cuts them further.
const maxSideFile = 1 << 20

// treeLines bounds the tree summary.
const treeLines = 400

// Report is what context-write prints with --json.
type Report struct {
	Prompt   string       `json:"prompt"`
	Bytes    int          `json:"bytes"`
	Budget   int          `json:"budget"`
	Over     int          `json:"over"` // bytes the required sections alone exceed the budget by
	Context  []string     `json:"context"`
	Sections []prompt.Fit `json:"sections"`
}

// Run writes the context and the prompt pack.
func (o *Options) Run(env *cli.Env) error {
	it, err := stepctx.Load(env, o.Iter, "")
	if err != nil {
		return err
	}
	dir, begin, cfg := it.Dir, it.Begin, it.Config
	// The tree the iteration began with (begin.json's tree_blob), mapped
	// where it can be (a large tree costs a fresh process fewer page
	// faults), and released once loaded: tree.Load copies what it keeps.
	data, release, name, err := iterdir.SnapshotTree(env.Dir, dir, begin)
	if err != nil {
		release()
		return exit.Errorf(exit.RunnerError, "%v", err)
	}
	root, ps := tree.Load(data)
	release()
	if len(ps) > 0 {
		return exit.Errorf(exit.RunnerError, "%s is invalid: %v", name, ps)
	}
	node, path := tree.Find(root, begin.NodeID)
	if node == nil {
		return exit.Errorf(exit.RunnerError, "node %q of begin.json is not in the tree", begin.NodeID)
	}
	rs, err := runstate.Load(env.Abs(layout.RunState))
	if err != nil {
		return exit.Wrap(exit.RunnerError, err)
	}
	in := inputs{env: env, cfg: cfg, begin: begin, root: root, node: node, path: path, rs: rs}
	files := in.contextFiles()

	ctxDir := env.Abs(layout.Context)
	if err := fsutil.InsideRoot(ctxDir, env.Dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exit.Errorf(exit.RunnerError, "%s: %v", layout.Context, err)
	}
	if err := clearContext(ctxDir, files); err != nil {
		return err
	}
	sections := in.sections(files)
	pack, fits, over := prompt.Build(sections, cfg.PromptBudgetBytes)
	// The context files and the prompt pack depend on none of each other:
	// they are written side by side, their disk waits overlapping.
	type write struct {
		path, name string
		data       []byte
		err        error
	}
	var (
		written []string
		writes  []*write
	)
	for _, name := range []string{GoalFile, HistoryFile, FailureFile} {
		if body, ok := files[name]; ok {
			if p := filepath.Join(ctxDir, name); !holds(p, body) {
				writes = append(writes, &write{path: p, name: layout.Context + "/" + name, data: []byte(body)})
			}
			written = append(written, layout.Context+"/"+name)
		}
	}
	writes = append(writes, &write{path: filepath.Join(dir, iterdir.PromptFile), name: iterdir.PromptFile, data: pack})
	var wg sync.WaitGroup
	for _, w := range writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.err = fsutil.WriteAtomic(w.path, w.data, 0o644)
		}()
	}
	wg.Wait()
	for _, w := range writes {
		if w.err != nil {
			return exit.Errorf(exit.RunnerError, "write %s: %v", w.name, fsutil.Cause(w.err))
		}
	}
	if over > 0 {
		env.Warnf("the required sections exceed prompt_budget_bytes=%d by %d bytes; the prompt is complete but over budget", cfg.PromptBudgetBytes, over)
	}
	rep := Report{Prompt: env.Rel(filepath.Join(dir, iterdir.PromptFile)), Bytes: len(pack), Budget: cfg.PromptBudgetBytes, Over: over, Context: written, Sections: fits}
	if o.JSON || o.Wanted() {
		return o.PrintJSON(env, rep)
	}
	var kept, cut, dropped []string
	for _, f := range fits {
		switch f.Action {
		case "cut":
			cut = append(cut, f.Name)
		case "dropped":
			dropped = append(dropped, f.Name)
		default:
			kept = append(kept, f.Name)
		}
	}
	fmt.Fprintf(env.Stdout, "prompt=%s bytes=%d budget=%d sections=%s cut=%s dropped=%s\n", rep.Prompt, rep.Bytes, rep.Budget, list(kept), list(cut), list(dropped))
	return nil
}

// clearContext leaves ctxDir a directory holding nothing but regular
// files named in files: whatever else is there (an earlier iteration's
// history.md, what a session added) is removed. A ctxDir that is not a
// directory (missing, a file, a symbolic link) is replaced by an empty one.
// The directory itself is kept when it is one (removing and
// creating it again cost every step a directory inode).
func clearContext(ctxDir string, files map[string]string) error {
	st, err := os.Lstat(ctxDir)
	if err == nil && st.IsDir() {
		entries, err := os.ReadDir(ctxDir)
		if err != nil {
			return exit.Errorf(exit.RunnerError, "clear %s: %v", layout.Context, fsutil.Cause(err))
		}
		for _, e := range entries {
			if _, keep := files[e.Name()]; keep && e.Type().IsRegular() {
				continue
			}
			if err := os.RemoveAll(filepath.Join(ctxDir, e.Name())); err != nil {
				return exit.Errorf(exit.RunnerError, "clear %s: %v", layout.Context, fsutil.Cause(err))
			}
		}
		return nil
	}
	if err := os.RemoveAll(ctxDir); err != nil {
		return exit.Errorf(exit.RunnerError, "clear %s: %v", layout.Context, fsutil.Cause(err))
	}
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		return exit.Errorf(exit.RunnerError, "create %s: %v", layout.Context, fsutil.Cause(err))
	}
	return nil
}

// holds reports whether path is already a regular file of mode 0644 with
// exactly body (an unchanged goal.md when a node is retried): it is then
// left as it is rather than written again.
func holds(path, body string) bool {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o644 || st.Size() != int64(len(body)) {
		return false
	}
	data, err := os.ReadFile(path)
	return err == nil && string(data) == body
}

func list(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

type inputs struct {
	env   *cli.Env
	cfg   config.Config
	begin iterdir.Begin
	root  *tree.Node
	node  *tree.Node
	path  string
	rs    runstate.State
}

// contextFiles are the files of .runner/context/ by name: goal.md always,
// history.md and failure.md after an attempt on the node that did not go
// through; what they quote has no terminal escapes.
func (in *inputs) contextFiles() map[string]string {
	files := map[string]string{GoalFile: in.goal() + redStart(in.env.Dir, in.begin)}
	if h := in.history(); h != "" {
		files[HistoryFile] = h
	}
	if f := in.failure(); f != "" {
		files[FailureFile] = f
	}
	for name, body := range files {
		files[name] = textclean.StripANSI(body)
	}
	return files
}

// goal is context/goal.md: the selected node's goal and acceptance.
func (in *inputs) goal() string {
	n := in.node
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", oneLine(n.Title))
	fmt.Fprintf(&b, "Node `%s` (path `%s`), mode %s, attempt %d of %d.\n\n", n.ID, in.path, in.begin.Mode, n.Attempts+1, n.MaxAttempts)
	fmt.Fprintf(&b, "## Goal\n\n%s\n\n## Acceptance\n\n", strings.TrimSpace(n.Goal))
	if len(n.Acceptance) == 0 {
		b.WriteString("(none given: the guard decides)\n")
	}
	for _, a := range n.Acceptance {
		fmt.Fprintf(&b, "- %s\n", oneLine(a))
	}
	in.answers(&b)
	return b.String()
}

// answers writes the operator's answers to the questions asked on the
// node and on its ancestors (tree-edit answer), oldest first: decisions
// the session must follow, so they are part of the node's brief.
func (in *inputs) answers(b *strings.Builder) {
	var on []*tree.Node
	for _, id := range strings.Split(in.path, "/") {
		if n, _ := tree.Find(in.root, id); n != nil && len(n.Answers) > 0 {
			on = append(on, n)
		}
	}
	if len(on) == 0 {
		return
	}
	b.WriteString("\n## Operator's answers\n\nAn earlier session asked the operator, who answered. These are decisions: follow them.\n")
	for _, n := range on {
		where := "this node"
		if n != in.node {
			where = fmt.Sprintf("node `%s`, an ancestor of this one", n.ID)
		}
		for i, a := range n.Answers {
			fmt.Fprintf(b, "\n### Question %d on %s\n\n%s\n\n**Answer:**\n\n%s\n", i+1, where, strings.TrimSpace(a.Question), strings.TrimSpace(a.Answer))
		}
	}
}

// previous reports whether the last iteration of the run worked this node:
// it then ended without passing it (a passed or decomposed node is not
// selected again).
func (in *inputs) previous() (iter int, ok bool) {
	if in.rs.LastIter == nil || runstate.Val(in.rs.LastNode) != in.node.ID {
		return 0, false
	}
	return *in.rs.LastIter, true
}

// history is context/history.md: how the previous attempt on this node
// ended, with its summary and agent-error reasons.
func (in *inputs) history() string {
	it, ok := in.previous()
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Previous attempt\n\nIteration %d worked this node and ended with status=%s guard=%s.\n",
		it, runstate.Val(in.rs.LastStatus), runstate.Val(in.rs.LastGuard))
	if s := strings.TrimSpace(runstate.Val(in.rs.LastSummary)); s != "" {
		fmt.Fprintf(&b, "\n## Its summary\n\n%s\n", s)
	}
	prev := in.env.Abs(layout.IterDir(in.begin.RunID, it))
	if log, err := fsutil.ReadFile(filepath.Join(prev, iterdir.AgentErrorLog), in.env.Dir, maxSideFile); err == nil && len(strings.TrimSpace(string(log))) > 0 {
		fmt.Fprintf(&b, "\n## Why it was an agent error\n\n%s\n", strings.TrimSpace(string(log)))
	}
	return b.String()
}

// failure is context/failure.md: the guard output of the previous attempt
// on this node when its guard failed.
func (in *inputs) failure() string {
	it, ok := in.previous()
	if !ok || runstate.Val(in.rs.LastGuard) != tree.GuardFail || runstate.Val(in.rs.LastStatus) != tree.AgentDone {
		return ""
	}
	guard := strings.Join(in.cfg.Guard.Command, " ")
	prev := in.env.Abs(layout.IterDir(in.begin.RunID, it))
	log, err := fsutil.ReadFile(filepath.Join(prev, iterdir.GuardLog), in.env.Dir, int64(in.cfg.GuardOutputLimitBytes)+4096)
	if err != nil {
		return fmt.Sprintf("# Guard failure\n\nThe guard (`%s`) failed in iteration %d; its log is not available here (%v). Run the guard yourself to see the failure.\n", guard, it, fsutil.Cause(err))
	}
	// The guard's terminal escapes (colours, cursor moves) are noise to
	// the agent and cost prompt budget; guard.log keeps them.
	text := textclean.StripANSI(string(log))
	f := prompt.Fence(text)
	return fmt.Sprintf("# Guard failure\n\nThe guard (`%s`) failed in iteration %d. Its output:\n\n%stext\n%s\n%s\n", guard, it, f, strings.TrimRight(text, "\n"), f)
}

// oneLine puts s on one line: line breaks become spaces, nothing else
// changes (spaces inside acceptance criteria can matter).
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s // most titles: no replacer to build (it is built on first use)
	}
	return lineBreaks.Replace(s)
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// sections assembles the prompt pack's sections (seed 000 §8).
func (in *inputs) sections(files map[string]string) []prompt.Section {
	ctx := layout.Context + "/"
	ss := []prompt.Section{
		{Name: prompt.Contract, Heading: fmt.Sprintf("# treeloop iteration %d: %s node %s", in.begin.Iteration, in.begin.Mode, in.node.ID), Body: in.contract(), Required: true},
	}
	// Every session sees what the whole run is for, not only its node.
	if g := in.runGoal(); g != "" {
		ss = append(ss, prompt.Section{Name: prompt.RunGoal, Heading: "## The run's goal (" + layout.Goal + ")", Body: g})
	}
	ss = append(ss, prompt.Section{Name: prompt.Goal, Heading: "## Selected node (" + ctx + GoalFile + ")", Body: files[GoalFile], Required: true})
	if h, ok := files[HistoryFile]; ok {
		ss = append(ss, prompt.Section{Name: prompt.History, Heading: "## Previous attempt (full text: " + ctx + HistoryFile + ")", Body: h})
	}
	if f, ok := files[FailureFile]; ok {
		ss = append(ss, prompt.Section{Name: prompt.Failure, Heading: "## Guard failure (full text: " + ctx + FailureFile + ")", Body: f})
	}
	// The answers are in the node's brief above, not twice in the prompt.
	shown := *in.node
	shown.Answers = nil
	sub, _ := jsondoc.Marshal(&shown)
	ss = append(ss, prompt.Section{Name: prompt.Node, Heading: "## Selected node as stored (" + layout.Tree + ")", Body: "Path: `" + in.path + "`\n\n```json\n" + string(sub) + "```", Required: true})
	ss = append(ss, prompt.Section{Name: prompt.Tree, Heading: "## The whole tree (summary; full tree: " + layout.Tree + ")", Body: in.summary()})
	for _, side := range []struct{ name, rel, title string }{
		{prompt.Assumptions, layout.Assumptions, "Assumptions"},
		{prompt.Questions, layout.Questions, "Open questions"},
		{prompt.Sidecar, layout.NodeContext(in.node.ID), "Notes for this node"},
	} {
		data, err := fsutil.ReadFile(in.env.Abs(side.rel), in.env.Dir, maxSideFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			in.env.Warnf("%s skipped: %v", side.rel, fsutil.Cause(err))
		}
		if body := strings.TrimSpace(string(data)); body != "" {
			ss = append(ss, prompt.Section{Name: side.name, Heading: "## " + side.title + " (" + side.rel + ")", Body: body})
		}
	}
	if body := in.artifacts(); body != "" {
		ss = append(ss, prompt.Section{Name: prompt.Artifacts, Heading: "## Artifacts (" + layout.Nodes + "/<id>/artifacts/)", Body: body})
	}
	ss = append(ss, prompt.Section{Name: prompt.Output, Heading: "## Output contract", Body: in.outputContract(), Required: true})
	// What the prompt quotes from programs and files (a guard's output, an
	// agent's summary, notes) reaches the agent without terminal escapes.
	for i := range ss {
		ss[i].Body = textclean.StripANSI(ss[i].Body)
	}
	return ss
}

// artifacts lists the files earlier sessions saved for the selected node
// and for its parent (seed 000 §3.4), one "- path (N bytes)" a line; ""
// when there are none.
func (in *inputs) artifacts() string {
	ids := []string{in.node.ID}
	if e := tree.Index(in.root)[in.node.ID]; e.Parent != nil {
		ids = append(ids, e.Parent.ID)
	}
	var b strings.Builder
	for _, id := range ids {
		files, _, err := artifacts.List(in.env.Dir, id)
		if err != nil {
			in.env.Warnf("%s skipped: %v", layout.NodeArtifacts(id), err)
			continue
		}
		for _, f := range files {
			fmt.Fprintf(&b, "- %s/%s (%d bytes)\n", layout.NodeArtifacts(id), f.Name, f.Bytes)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "Files saved for this node and its parent by earlier sessions; read the ones you need. Save what this node's later sessions or reviewers should see (a report, a screenshot, a benchmark) under " + layout.NodeArtifacts(in.node.ID) + "/ (at most " + strconv.Itoa(in.cfg.ArtifactsLimitBytes) + " bytes in all).\n\n" + b.String()
}

// runGoal is GOAL.md's text without its front matter, "" when there is
// none to read.
func (in *inputs) runGoal() string {
	data, err := fsutil.ReadFile(in.env.Abs(layout.Goal), in.env.Dir, maxSideFile)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			in.env.Warnf("%s skipped: %v", layout.Goal, fsutil.Cause(err))
		}
		return ""
	}
	doc, err := goal.Parse(data)
	if err != nil {
		in.env.Warnf("%s skipped: %v", layout.Goal, err)
		return ""
	}
	return strings.TrimSpace(string(doc.Body))
}

// contract is the runner contract for the mode.
func (in *inputs) contract() string {
	guard := strings.Join(in.cfg.Guard.Command, " ")
	var protected, appendOnly, keys []string
	for _, e := range in.cfg.ProtectedPaths {
		if file, key, ok := config.ProtectedKey(e); ok {
			keys = append(keys, key+" in "+file)
		} else if g, ao := config.ProtectedGlob(e); ao {
			appendOnly = append(appendOnly, g)
		} else {
			protected = append(protected, g)
		}
	}
	slices.Sort(protected)
	slices.Sort(appendOnly)
	var b strings.Builder
	b.WriteString("You are one fresh session of treeloop, a runner that works a task tree (" + layout.Tree + ") in this git repository one node at a time. You see only this prompt and the repository; nothing carries over from earlier sessions except what is written below and in the repository.\n\n")
	b.WriteString("What the runner enforces:\n")
	fmt.Fprintf(&b, "- A node passes only when you report done and the guard (`%s`) then succeeds. Saying done does not pass anything.\n", guard)
	owned := tree.RunnerOwnedFields()
	fmt.Fprintf(&b, "- %s and %s are runner-owned: your changes to them are reset.\n", strings.Join(owned[:len(owned)-1], ", "), owned[len(owned)-1])
	b.WriteString("- A passed node must not change. New nodes come only from a decompose answer, never from editing the tree.\n")
	b.WriteString("- You may edit the title, goal and acceptance of open nodes, and append to " + layout.Assumptions + " and " + layout.Questions + ".\n")
	fmt.Fprintf(&b, "- Files worth keeping for this node (a report, a screenshot, a benchmark) go under %s/ (at most %d bytes in all): they are committed and listed to this node's and its parent's later sessions.\n", layout.NodeArtifacts(in.node.ID), in.cfg.ArtifactsLimitBytes)
	fmt.Fprintf(&b, "- Do not touch %s, %s, %s, %s, %s, %s", layout.Goal, layout.Config, layout.Schema, layout.AgentOutputSchema, layout.RunState, layout.NodeToolsGlob)
	if len(protected) > 0 {
		fmt.Fprintf(&b, ", or the protected paths %s", strings.Join(protected, ", "))
	}
	b.WriteString(".\n")
	if len(keys) > 0 {
		fmt.Fprintf(&b, "- Do not change these settings (the rest of their files is yours, a dependency included): %s. A change to one puts the whole file back.\n", strings.Join(keys, ", "))
	}
	if len(appendOnly) > 0 {
		fmt.Fprintf(&b, "- %s are append-only: you may add new files there, but not change, delete or rename the files that exist.\n", strings.Join(appendOnly, ", "))
	}
	if len(in.cfg.Guard.Ratchet) > 0 {
		b.WriteString("- A test ratchet counts the passing tests after the guard: fewer than the best of this run and the node does not pass.\n")
	}
	b.WriteString(in.evidenceRules())
	b.WriteString("- Do not commit, switch branches or reset: the runner commits every iteration itself.\n")
	b.WriteString("Breaking a rule is an agent error: the runner undoes the offending change and the attempt is spent.\n\n")
	b.WriteString("If the work needs a decision only the operator can make, do not guess: answer blocked with your questions as the summary. The node waits for the answer (no attempt spent) and gets it in its next prompt.\n\n")
	if in.begin.Mode == tree.NextDecompose {
		b.WriteString("Your task in decompose mode: do not implement anything. Split the selected node into an ordered list of smaller children that together achieve its goal, each small enough for one session, each with a goal and checkable acceptance criteria. Give a child next=\"execute\" when one session can do it, next=\"decompose\" when it needs splitting again. The runner inserts the children and works them left to right.")
		if in.node.SentBack {
			b.WriteString("\n\nThis node used up its attempts without passing and came back to you once in decompose mode (sent_back): split it into smaller children, or rewrite it as one child whose goal and acceptance one session can reach. When its attempts run out again, it stays stuck.")
		}
	} else {
		fmt.Fprintf(&b, "Your task in execute mode: do the selected node's work in the repository so that its acceptance criteria hold and `%s` passes. Then report done. If you cannot finish, report retry and say in the summary what is left and why; the next session reads it.", guard)
	}
	return b.String()
}

// evidenceRules are the contract's lines on evidence by name (DESIGN.md
// decision 24), "" when [guard] results is off.
func (in *inputs) evidenceRules() string {
	if !in.cfg.Guard.EvidenceOn() {
		return ""
	}
	var b strings.Builder
	b.WriteString("- The guard reports its tests by name. Every test that passed before this node's work must pass again: a test deleted, renamed, skipped, deselected or filtered out by a configuration change fails the guard. A node's evidence is runner-owned too.\n")
	if in.begin.Mode == tree.NextDecompose {
		b.WriteString("- Each execute child passes only with a witness: a test its session adds or changes that fails without its work and passes with it. A child whose work no test can witness (documentation, configuration, a pure refactor) may carry \"evidence\": \"suite\"; its pass is then shown as weaker than a witnessed one.\n")
		return b.String()
	}
	if level, _ := evidence.Level(in.node, in.cfg.Guard); level == tree.EvidenceWitness {
		fmt.Fprintf(&b, "- This node passes only with a witness: a test you add or change in a test file (%s) that fails on the code before this node's work and passes with it. The runner checks it itself: it runs your changed test files on the old code in a clean checkout, and the guard runs them on yours. Write the test first and see it fail.\n", strings.Join(in.cfg.Guard.TestFiles, ", "))
	} else {
		fmt.Fprintf(&b, "- This node's evidence is %s: no witness test is asked for, the suite alone must pass.\n", evidence.Describe(level))
	}
	return b.String()
}

// outputContract is the last section: the answer's exact shape.
func (in *inputs) outputContract() string {
	allowed := tree.AgentStatuses(in.begin.Mode)
	out := filepath.ToSlash(filepath.Join(layout.IterDir(in.begin.RunID, in.begin.Iteration), iterdir.OutputFile))
	var b strings.Builder
	b.WriteString("You MUST end the session with exactly one JSON object as your answer. When the environment variable RUNNER_OUTPUT is set, write the object to the file it names (here " + out + ") before you exit.\n\n")
	fmt.Fprintf(&b, "Allowed status in %s mode: %s. Anything else, invalid JSON or extra keys is an agent error.\n\n", in.begin.Mode, strings.Join(quote(allowed), " or "))
	if in.begin.Mode == tree.NextDecompose {
		b.WriteString("```json\n{\"status\": \"decomposed\", \"summary\": \"why this split\", \"children\": [\n  {\"title\": \"...\", \"goal\": \"...\", \"acceptance\": [\"...\"], \"next\": \"execute\"}\n]}\n```\n\n")
		b.WriteString("children: at least one when decomposed; [] with retry or blocked.")
		if in.cfg.Guard.EvidenceOn() {
			b.WriteString(" A child may add \"evidence\": \"suite\" (or \"witness\", the default).")
		}
	} else {
		b.WriteString("```json\n{\"status\": \"done\", \"summary\": \"what you changed and how it meets the acceptance criteria\", \"children\": []}\n```\n\n")
		b.WriteString("children is always [] in execute mode.")
	}
	b.WriteString("\n\nTo ask the operator: `{\"status\": \"blocked\", \"summary\": \"your questions\", \"children\": []}`")
	return b.String()
}

func quote(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = `"` + s + `"`
	}
	return out
}

// summary is the bounded tree summary: one line per node, depth first in
// (order, id) order, passed subtrees folded.
func (in *inputs) summary() string {
	var b strings.Builder
	lines, omitted := 0, 0
	var walk func(n *tree.Node, depth int)
	walk = func(n *tree.Node, depth int) {
		if lines >= treeLines {
			omitted += 1
			for _, c := range n.Children {
				omitted += tree.Count(c)
			}
			return
		}
		lines++
		mark := "[ ]"
		if n.Passes {
			mark = "[x]"
		}
		title := oneLine(n.Title)
		if len(title) > 100 {
			title = strings.ToValidUTF8(title[:100], "") + "…"
		}
		fmt.Fprintf(&b, "%s- %s %s: %s", strings.Repeat("  ", depth), mark, n.ID, title)
		switch {
		case n.ID == in.node.ID:
			b.WriteString("  ← selected")
		case n.IsWaiting():
			b.WriteString("  (waits for the operator's answer)")
		case n.IsLeaf() && !n.Passes:
			fmt.Fprintf(&b, "  (%s, attempts %d/%d)", n.Next, n.Attempts, n.MaxAttempts)
		}
		b.WriteString("\n")
		if n.Passes && len(n.Children) > 0 {
			lines++
			fmt.Fprintf(&b, "%s  (%d passed nodes folded)\n", strings.Repeat("  ", depth), tree.Count(n)-1)
			return
		}
		kids := append([]*tree.Node{}, n.Children...)
		slices.SortStableFunc(kids, func(a, c *tree.Node) int {
			if tree.Less(a, c) {
				return -1
			}
			if tree.Less(c, a) {
				return 1
			}
			return 0
		})
		for _, c := range kids {
			walk(c, depth+1)
		}
	}
	walk(in.root, 0)
	if omitted > 0 {
		fmt.Fprintf(&b, "… %d more nodes not shown\n", omitted)
	}
	return b.String()
}
