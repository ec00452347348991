package runnerinit

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/goal"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plan"
	"github.com/treeloop/treeloop/lib/tree"
)

// imported is a plan runner-init starts the tree from (--plan).
type imported struct {
	plan plan.Plan
	root *tree.Node
}

// importPlan reads --plan into a tree (lib/plan, as tree-import does),
// reporting every rejected line as a warning.
func (o *Options) importPlan(env *cli.Env, cfg config.Config) (*imported, error) {
	data, err := fsutil.ReadFile(env.Abs(o.Plan), "", 16<<20)
	if err != nil {
		return nil, exit.Errorf(exit.Negative, "--plan: %v", fsutil.Cause(err))
	}
	p, root, err := plan.Import(data, o.PlanFormat, "Plan", o.RootID, cfg.MaxAttemptsDefault)
	if err != nil {
		return nil, exit.Errorf(exit.Negative, "--plan %s: %v", o.Plan, err)
	}
	for _, r := range p.Rejected {
		env.Warnf("--plan %s: line %d: rejected: %s: %s", o.Plan, r.Line, r.Reason, r.Text)
	}
	return &imported{plan: p, root: root}, nil
}

// goal is the GOAL.md of the plan's root: its title as the heading, its
// goal as the text (the title again when it has none, as GOAL.md reads)
// and its acceptance criteria as an "## Acceptance" list, one line each.
func (im *imported) goal() []byte {
	var b strings.Builder
	b.WriteString("# " + im.root.Title + "\n")
	if body := strings.TrimSpace(im.root.Goal); body != "" {
		b.WriteString("\n" + body + "\n")
	}
	if len(im.root.Acceptance) > 0 {
		b.WriteString("\n## Acceptance\n\n")
		for _, a := range im.root.Acceptance {
			b.WriteString("- " + strings.Join(strings.Fields(a), " ") + "\n")
		}
	}
	return []byte(b.String())
}

// tree is the plan's tree with the root's title, goal and acceptance as
// GOAL.md gives them (runner-start holds the root to GOAL.md until it is
// worked).
func (im *imported) tree(doc goal.Doc) ([]byte, error) {
	title, body, acceptance, err := doc.Root()
	if err != nil {
		return nil, exit.Errorf(exit.Negative, "%s: %v", layout.Goal, err)
	}
	root := im.root.Clone()
	root.Title, root.Goal, root.Acceptance = title, body, acceptance
	data := tree.Encode(root)
	if _, ps := tree.Load(data); len(ps) > 0 {
		return nil, exit.Errorf(exit.Negative, "the tree from the plan would be invalid: %v", ps)
	}
	return data, nil
}

// assumptions is assumptions.md with the plan's checked items appended
// once.
func (im *imported) assumptions(env *cli.Env, source string) ([]byte, error) {
	old, err := os.ReadFile(env.Abs(layout.Assumptions))
	if errors.Is(err, fs.ErrNotExist) {
		old = []byte(assumptionsHeader)
	} else if err != nil {
		return nil, exit.Errorf(exit.RunnerError, "read %s: %v", layout.Assumptions, fsutil.Cause(err))
	}
	add := im.plan.AssumptionsMarkdown(source)
	if add == "" || strings.Contains(string(old), add) {
		return old, nil
	}
	return []byte(strings.TrimRight(string(old), "\n") + "\n" + add), nil
}

// assumptionsHeader starts a new assumptions.md.
const assumptionsHeader = "# Assumptions\n\nThe agent may append assumptions here; the runner keeps them.\n"

// planConflict is the refusal for a tree.json that differs from the
// plan's without --new.
func planConflict(plan string) error {
	return exit.Errorf(exit.Negative, "%s exists and differs from the tree of %s: start over from the plan with runner-init --new --plan %s", layout.Tree, plan, plan)
}
