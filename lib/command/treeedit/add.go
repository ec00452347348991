package treeedit

import (
	"os"

	"github.com/tidwall/sjson"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/subject"
	"github.com/treeloop/treeloop/lib/tree"
)

// AddCmd is `tree-edit add`.
type AddCmd struct {
	Parent      string   `arg:"" placeholder:"PARENT" predictor:"node" help:"The node the new leaf goes under: one that has not passed and does not wait for an answer."`
	Title       string   `required:"" placeholder:"TEXT" help:"The new node's title (1 to 256 characters)."`
	Goal        string   `placeholder:"TEXT" help:"Its goal (default: the title)."`
	Acceptance  []string `placeholder:"TEXT" sep:"none" help:"One acceptance criterion; repeat the flag for each (default: none, the guard decides)."`
	Order       *int64   `placeholder:"N" help:"Its order among its siblings, which sort by (order, id) (default: one after the last)."`
	Next        string   `enum:"execute,decompose" default:"execute" help:"How the agent first works it: execute (do it) or decompose (split it into children first)."`
	MaxAttempts int      `name:"max-attempts" placeholder:"N" help:"Its max_attempts (default: max_attempts_default of .runner/state/config.toml)."`
	Evidence    string   `enum:"witness,suite,default" default:"default" help:"What it needs to pass beside a green guard: witness (a test it adds fails without its work), suite (the suite alone, shown as a weaker pass) or default ([guard] evidence and suite_nodes decide)."`
}

// Run adds the leaf.
func (c *AddCmd) Run(env *cli.Env) error {
	if !tree.ValidID(c.Parent) {
		return exit.Errorf(exit.Usage, "%q is not a node id", c.Parent)
	}
	if c.MaxAttempts < 0 || c.MaxAttempts > tree.MaxAttemptsLimit {
		return exit.Errorf(exit.Usage, "--max-attempts must be 1 to %d, got %d", tree.MaxAttemptsLimit, c.MaxAttempts)
	}
	release, err := lock(env)
	if err != nil {
		return err
	}
	defer release()
	maxAttempts := c.MaxAttempts
	if maxAttempts == 0 {
		cfg, err := config.Load(env.Abs(layout.Config), os.LookupEnv)
		if err != nil {
			return refused("%v: fix it, or give --max-attempts N", err)
		}
		maxAttempts = cfg.MaxAttemptsDefault
	}
	var id string
	_, err = editHeldAs(env, subject.ActionAdd, c.Parent, func() string { return id }, func(p *tree.Node, at string, data []byte) ([]byte, error) {
		if p.IsWaiting() {
			return nil, refused("node %s waits for an answer: answer it first (tree-edit answer %s TEXT), then add under it", p.ID, p.ID)
		}
		root, ps := tree.Load(data)
		if len(ps) > 0 {
			return nil, refused("%s is invalid (first: %s); run tree-validate", layout.Tree, ps[0])
		}
		id = tree.ChildIDs(root, p.ID, 1)[0]
		n := c.node(id, p, maxAttempts)
		data, err := sjson.SetRawBytes(data, field(at, "children.-1"), tree.Encode(n))
		if err != nil {
			return nil, err
		}
		// The node joins its siblings in (order, id) order.
		added, _ := tree.Load(data)
		if added == nil {
			return data, nil // the validation after the change words the problem
		}
		tree.Sort(added)
		return tree.Encode(added), nil
	})
	return err
}

// node is the new leaf id under parent p: open, no attempt spent.
func (c *AddCmd) node(id string, p *tree.Node, maxAttempts int) *tree.Node {
	order := int64(1)
	for _, k := range p.Children {
		order = max(order, k.Order+1)
	}
	if c.Order != nil {
		order = *c.Order
	}
	goal := c.Goal
	if goal == "" {
		goal = c.Title
	}
	evidence := c.Evidence
	if evidence == "default" {
		evidence = ""
	}
	return &tree.Node{ID: id, Order: order, Title: c.Title, Goal: goal, Acceptance: append([]string{}, c.Acceptance...),
		Next: c.Next, MaxAttempts: maxAttempts, Evidence: evidence, Children: []*tree.Node{}}
}
