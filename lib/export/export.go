package export

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/tree"
)

// The trailers of an exported commit.
const (
	TrailerNode  = "Treeloop-Node"
	TrailerGuard = "Treeloop-Guard"
	TrailerRun   = "Treeloop-Run"
)

// Step is one passed leaf of the run, in the order the run passed them.
type Step struct {
	Node *tree.Node
	Path string // ids from the root, "/"-joined
	Loop Commit // the iteration commit that passed it
	// Tree is the code as it stood when the node passed: Loop's tree with
	// .runner/ as the base has it (absent when the base has none).
	Tree string
	// Changed: Tree differs from the previous step's (the base's for the
	// first); a step that changed nothing gets no commit.
	Changed bool
}

// Plan is what an export of a run holds, read from git alone.
type Plan struct {
	History
	Root  *tree.Node // the tree at the tip
	Steps []Step
	// Open are the leaves that have not passed (stuck ones included), in
	// the tree's order: an unfinished run exports what passed.
	Open []string
	// Unexported is the first commit after the last step whose code
	// (outside .runner/) differs from the last step's; nil when the tip's
	// code is the last step's.
	Unexported *Commit
	// Runner is the base's .runner entry (zero when it has none).
	Runner git.RootEntry
}

// NewPlan reads what run runID's export holds: the history of its branch,
// the tree at its tip, the passed leaves with the commit that passed each
// (PassedBy, checked against that commit's tree) and each one's code
// without .runner/.
func NewPlan(repo *git.Repo, runID string) (Plan, error) {
	h, err := ReadHistory(repo, runID)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{History: h}
	data, ok, err := repo.ShowFile(h.Tip, layout.Tree)
	if err != nil {
		return p, err
	}
	if !ok {
		return p, fmt.Errorf("%s has no %s", h.Branch, layout.Tree)
	}
	root, ps := tree.Load(data)
	if len(ps) > 0 {
		return p, fmt.Errorf("%s of %s is invalid: %v", layout.Tree, h.Branch, ps[0])
	}
	p.Root = root
	if err := p.steps(repo); err != nil {
		return p, err
	}
	return p, p.trees(repo)
}

// steps finds the passed leaves of p.Root and the commit that passed each,
// in the order they passed, and the open leaves.
func (p *Plan) steps(repo *git.Repo) error {
	by := PassedBy(p.History)
	index := map[string]int{}
	for i, c := range p.Commits {
		index[c.SHA] = i
	}
	var walk func(n *tree.Node, path string)
	walk = func(n *tree.Node, path string) {
		if path != "" {
			path += "/"
		}
		path += n.ID
		if !n.IsLeaf() {
			for _, c := range ordered(n.Children) {
				walk(c, path)
			}
			return
		}
		if !n.Passes {
			p.Open = append(p.Open, n.ID)
			return
		}
		p.Steps = append(p.Steps, Step{Node: n, Path: path, Loop: by[n.ID]})
	}
	walk(p.Root, "")
	var check []git.File
	for _, s := range p.Steps {
		if s.Loop.SHA == "" {
			return fmt.Errorf("node %s passes in %s's tree but no iteration commit of the run passed it", s.Node.ID, p.Branch)
		}
		check = append(check, git.File{Rev: s.Loop.SHA, Path: layout.Tree})
	}
	files, err := repo.ShowFiles(check...)
	if err != nil {
		return err
	}
	for i, f := range files {
		id := p.Steps[i].Node.ID
		t, ps := tree.Load(f.Data)
		if n, _ := tree.Find(t, id); f.Err != nil || !f.OK || len(ps) > 0 || n == nil || !n.Passes {
			return fmt.Errorf("commit %s says node %s passed, but the tree it holds does not", short(p.Steps[i].Loop.SHA), id)
		}
	}
	sortSteps(p.Steps, index)
	return nil
}

// ordered is nodes by (order, id), as selection visits them.
func ordered(nodes []*tree.Node) []*tree.Node {
	return slices.SortedStableFunc(slices.Values(nodes), func(a, b *tree.Node) int {
		switch {
		case tree.Less(a, b):
			return -1
		case tree.Less(b, a):
			return 1
		}
		return 0
	})
}

// sortSteps orders steps by the position of their commit in the history.
func sortSteps(steps []Step, index map[string]int) {
	for i := 1; i < len(steps); i++ {
		for j := i; j > 0 && index[steps[j].Loop.SHA] < index[steps[j-1].Loop.SHA]; j-- {
			steps[j], steps[j-1] = steps[j-1], steps[j]
		}
	}
}

// trees computes each step's tree without the run's .runner/ (one
// cat-file and one mktree for all of them), which steps changed code, and
// the first later commit whose code is not exported.
func (p *Plan) trees(repo *git.Repo) error {
	var in []string
	if p.BaseTree != "" {
		in = append(in, p.BaseTree)
	}
	for _, s := range p.Steps {
		in = append(in, s.Loop.Tree)
	}
	last := 0
	if len(p.Steps) > 0 {
		for i, c := range p.Commits {
			if c.SHA == p.Steps[len(p.Steps)-1].Loop.SHA {
				last = i
			}
		}
	}
	after := p.Commits[last+1:]
	if len(p.Steps) == 0 {
		after = p.Commits
	}
	for _, c := range after {
		in = append(in, c.Tree)
	}
	out, e, err := repo.WithRootEntry(in, layout.Runner, p.BaseTree)
	if err != nil {
		return err
	}
	p.Runner = e
	prev := emptyTree(p.Tip)
	if p.BaseTree != "" {
		prev, out = out[0], out[1:]
	}
	for i := range p.Steps {
		p.Steps[i].Tree = out[i]
		p.Steps[i].Changed = out[i] != prev
		prev = out[i]
	}
	for i, c := range after {
		if out[len(p.Steps)+i] != prev {
			c := c
			p.Unexported = &c
			break
		}
	}
	return nil
}

// emptyTree is the empty tree's id in the hash of commit id like.
func emptyTree(like string) string {
	if len(like) == 64 {
		return "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
	}
	return "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
}

// Changed are the steps that get a commit.
func (p Plan) Changed() []Step {
	var out []Step
	for _, s := range p.Steps {
		if s.Changed {
			out = append(out, s)
		}
	}
	return out
}

// Options say how the branch is made.
type Options struct {
	Branch string // the branch to write
	Onto   string // the commit the branch starts from; "" for the run's base
	Squash bool   // one commit for every node
	Force  bool   // replace an existing branch
}

// Exported is one commit of the export.
type Exported struct {
	Commit string   `json:"commit"`
	Nodes  []string `json:"nodes"`  // the nodes it carries (one, or all with --squash)
	Title  string   `json:"title"`  // its subject
	Loop   []string `json:"passed"` // the iteration commits that passed its nodes
}

// Result is what Build made.
type Result struct {
	Branch  string     `json:"branch"`
	Onto    string     `json:"onto"` // the commit the branch starts from; "" for a root commit
	Head    string     `json:"head"` // the branch's commit; Onto when nothing changed code
	Commits []Exported `json:"commits"`
	// Unchanged: the branch already pointed at Head.
	Unchanged bool `json:"unchanged"`
}

// ErrNothing is Build's error when no passed node changed code.
var ErrNothing = errors.New("no passed node of the run changed code outside " + layout.Runner + "/")

// Build writes the export of p as the branch o.Branch and returns it.
func Build(repo *git.Repo, p Plan, o Options) (Result, error) {
	res := Result{Branch: o.Branch, Commits: []Exported{}}
	steps := p.Changed()
	if len(steps) == 0 {
		return res, ErrNothing
	}
	onto, ontoTree := p.Base, p.BaseTree
	if o.Onto != "" {
		c, err := repo.ResolveCommit(o.Onto)
		if err != nil {
			return res, fmt.Errorf("--onto %s is not a commit", o.Onto)
		}
		onto = c
		if ontoTree, err = treeOf(repo, c); err != nil {
			return res, err
		}
	}
	res.Onto = onto
	trees := make([]string, len(steps))
	for i, s := range steps {
		trees[i] = s.Tree
	}
	if onto != p.Base {
		var err error
		if trees, err = replay(repo, p, steps, ontoTree); err != nil {
			return res, err
		}
	}
	if ontoTree == "" {
		ontoTree = emptyTree(p.Tip)
	}
	head, err := commits(repo, p, steps, trees, onto, ontoTree, o.Squash, &res)
	if err != nil {
		return res, err
	}
	if len(res.Commits) == 0 {
		return res, fmt.Errorf("%s already holds every change the run's passed leaves made: nothing to export onto it", short(onto))
	}
	res.Head = head
	return res, setBranch(repo, o, p, &res)
}

// commits writes the export's commits on onto (whose tree is ontoTree),
// each node's (or one for all with squash) with the tree of trees, none
// that would change nothing, and returns the last.
func commits(repo *git.Repo, p Plan, steps []Step, trees []string, onto, ontoTree string, squash bool, res *Result) (string, error) {
	head := onto
	parents := func() []string {
		if head == "" {
			return nil
		}
		return []string{head}
	}
	if squash {
		last := steps[len(steps)-1]
		if trees[len(trees)-1] == ontoTree {
			return head, nil
		}
		msg := SquashMessage(p, steps)
		c, err := repo.CommitTree(trees[len(trees)-1], parents(), msg, last.Loop.Author, last.Loop.Committer)
		if err != nil {
			return "", err
		}
		e := Exported{Commit: c, Title: subjectOf(msg)}
		for _, s := range steps {
			e.Nodes = append(e.Nodes, s.Node.ID)
			e.Loop = append(e.Loop, s.Loop.SHA)
		}
		res.Commits = append(res.Commits, e)
		return c, nil
	}
	prevTree := ontoTree
	for i, s := range steps {
		if trees[i] == prevTree {
			continue // replayed onto another base, its change was already there
		}
		msg := NodeMessage(p.RunID, s.Node)
		c, err := repo.CommitTree(trees[i], parents(), msg, s.Loop.Author, s.Loop.Committer)
		if err != nil {
			return "", err
		}
		head, prevTree = c, trees[i]
		res.Commits = append(res.Commits, Exported{Commit: c, Nodes: []string{s.Node.ID}, Title: subjectOf(msg), Loop: []string{s.Loop.SHA}})
	}
	return head, nil
}

// replay carries each step's change onto ontoTree (three-way merges in
// memory, git merge-tree): a shadow history of the steps' trees, S0 (the
// base) to Sn, and a merged line X0 = ontoTree on S0, Xi = merge of X(i-1)
// and Si, so that each merge's base is S(i-1). It returns the merged trees.
func replay(repo *git.Repo, p Plan, steps []Step, ontoTree string) ([]string, error) {
	who := steps[0].Loop.Committer
	baseTree := p.BaseTree // the steps' trees keep its .runner entry
	if baseTree == "" {
		baseTree = emptyTree(p.Tip)
	}
	s, err := repo.CommitTree(baseTree, nil, "base\n", who, who)
	if err != nil {
		return nil, err
	}
	x, err := repo.CommitTree(ontoTree, []string{s}, "onto\n", who, who)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(steps))
	for i, st := range steps {
		if s, err = repo.CommitTree(st.Tree, []string{s}, "node "+st.Node.ID+"\n", who, who); err != nil {
			return nil, err
		}
		merged, err := repo.MergeTree(x, s)
		var c *git.Conflict
		if errors.As(err, &c) {
			return nil, fmt.Errorf("node %s's changes conflict with --onto in %s: export without --onto and rebase the branch yourself", st.Node.ID, strings.Join(c.Paths, ", "))
		}
		if err != nil {
			return nil, err
		}
		if x, err = repo.CommitTree(merged, []string{x, s}, "merged\n", who, who); err != nil {
			return nil, err
		}
		out[i] = merged
	}
	return out, nil
}

// setBranch points o.Branch at res.Head: a new branch, or an existing one
// already there (Unchanged), or with o.Force any branch not checked out.
func setBranch(repo *git.Repo, o Options, p Plan, res *Result) error {
	if strings.HasPrefix(o.Branch, layout.BranchPrefix) {
		return fmt.Errorf("--branch %s is a run branch name (%s…): choose another", o.Branch, layout.BranchPrefix)
	}
	if !repo.ValidBranchName(o.Branch) {
		return fmt.Errorf("--branch %q is not a valid branch name", o.Branch)
	}
	old := ""
	if ok, err := repo.BranchExists(o.Branch); err != nil {
		return err
	} else if ok {
		if old, err = repo.ResolveCommit("refs/heads/" + o.Branch); err != nil {
			return err
		}
	}
	if old == res.Head {
		res.Unchanged = true
		return nil
	}
	if old != "" {
		if !o.Force {
			return fmt.Errorf("branch %s exists (at %s): pass --force to replace it, or choose another with --branch", o.Branch, short(old))
		}
		if wt, ok, err := checkedOut(repo, o.Branch); err != nil {
			return err
		} else if ok {
			return fmt.Errorf("branch %s is checked out in %s: switch that work tree to another branch first", o.Branch, wt)
		}
	}
	return repo.SetBranch(o.Branch, res.Head, old, "runner-export: run "+p.RunID)
}

// checkedOut reports the work tree branch is checked out in, if any.
func checkedOut(repo *git.Repo, branch string) (string, bool, error) {
	out, err := repo.Run("worktree", "list", "--porcelain")
	if err != nil {
		return "", false, err
	}
	path := ""
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			path = p
		}
		if l == "branch refs/heads/"+branch {
			return path, true, nil
		}
	}
	return "", false, nil
}

func treeOf(repo *git.Repo, commit string) (string, error) {
	out, err := repo.Run("rev-parse", "--verify", commit+"^{tree}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// NodeMessage is the message of node n's commit: its title, its goal and
// acceptance, and the trailers.
func NodeMessage(runID string, n *tree.Node) string {
	var b strings.Builder
	b.WriteString(oneLine(n.Title, "node "+n.ID) + "\n")
	body := paragraph(n.Goal)
	if len(n.Acceptance) > 0 {
		if body != "" {
			body += "\n\n"
		}
		body += "Acceptance:"
		for _, a := range n.Acceptance {
			body += "\n- " + oneLine(a, "")
		}
	}
	if body != "" {
		b.WriteString("\n" + body + "\n")
	}
	fmt.Fprintf(&b, "\n%s: %s\n%s: pass\n%s: %s\n", TrailerNode, n.ID, TrailerGuard, TrailerRun, runID)
	return b.String()
}

// SquashMessage is the message of the one commit of --squash: the root's
// title and goal, the nodes, and the trailers (one Treeloop-Node each).
func SquashMessage(p Plan, steps []Step) string {
	var b strings.Builder
	b.WriteString(oneLine(p.Root.Title, "run "+p.RunID) + "\n")
	if g := paragraph(p.Root.Goal); g != "" {
		b.WriteString("\n" + g + "\n")
	}
	b.WriteString("\nNodes:\n")
	for _, s := range steps {
		fmt.Fprintf(&b, "- %s: %s\n", s.Node.ID, oneLine(s.Node.Title, ""))
	}
	b.WriteString("\n")
	for _, s := range steps {
		fmt.Fprintf(&b, "%s: %s\n", TrailerNode, s.Node.ID)
	}
	fmt.Fprintf(&b, "%s: pass\n%s: %s\n", TrailerGuard, TrailerRun, p.RunID)
	return b.String()
}

// oneLine is s on one line (line breaks as spaces, trimmed), or def when
// empty.
func oneLine(s, def string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return def
	}
	return s
}

// paragraph is s trimmed, with its lines' trailing spaces and repeated
// blank lines removed (as git commit's cleanup would).
func paragraph(s string) string {
	var out []string
	blank := false
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		l = strings.TrimRight(l, " \t\r")
		if l == "" {
			if !blank && len(out) > 0 {
				out = append(out, "")
			}
			blank = true
			continue
		}
		blank = false
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func subjectOf(msg string) string {
	s, _, _ := strings.Cut(msg, "\n")
	return s
}
