package treeedit

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tidwall/sjson"

	"github.com/treeloop/treeloop/lib/answer"
	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runlock"
	"github.com/treeloop/treeloop/lib/subject"
	"github.com/treeloop/treeloop/lib/tree"
)

// AnswerCmd is `tree-edit answer`.
type AnswerCmd struct {
	ID   string `arg:"" placeholder:"ID" help:"The waiting node."`
	Text string `arg:"" optional:"" placeholder:"TEXT" help:"The answer (or --file)."`
	File string `placeholder:"FILE" help:"Read the answer from FILE (- for standard input) instead of TEXT."`
	By   string `default:"operator" env:"TREELOOP_ANSWER_BY" help:"Who answers, for the queued answer's record while a runner works (runner-ui gives its own name)."`
}

// Validate checks that the answer comes from one place.
func (c *AnswerCmd) Validate() error {
	if (c.Text == "") == (c.File == "") {
		return errors.New("give the answer as TEXT or with --file FILE, one of them")
	}
	return nil
}

// Run answers the node: committed at once, or queued while a runner works.
func (c *AnswerCmd) Run(env *cli.Env) error {
	if !tree.ValidID(c.ID) {
		return exit.Errorf(exit.Usage, "%q is not a node id", c.ID)
	}
	text, err := c.text(env)
	if err != nil {
		return err
	}
	release, err := lock(env)
	if err == nil {
		defer release()
		_, err = editHeld(env, subject.ActionAnswer, c.ID, answerChange(text, ""))
		return err
	}
	var ee *exit.Error
	if !errors.As(err, &ee) || ee.Code != exit.Negative || !errors.Is(err, errLocked) {
		return err
	}
	return c.queue(env, text)
}

// text is the answer, from TEXT or --file, checked (answer.Text).
func (c *AnswerCmd) text(env *cli.Env) (string, error) {
	s := c.Text
	if c.File != "" {
		var data []byte
		var err error
		if c.File == "-" {
			data, err = io.ReadAll(io.LimitReader(env.Stdin, 1<<20))
		} else {
			data, err = fsutil.ReadFile(env.Abs(c.File), "", 1<<20)
		}
		if err != nil {
			return "", exit.Errorf(exit.Usage, "--file %s: %v", c.File, fsutil.Cause(err))
		}
		s = string(data)
	}
	t, err := answer.Text(s)
	if err != nil {
		return "", exit.Errorf(exit.Usage, "%v", err)
	}
	return t, nil
}

// queue queues the answer for the runner that holds the lock: the node
// must wait in the tree the run last committed.
func (c *AnswerCmd) queue(env *cli.Env, text string) error {
	repo, err := git.Open(env.Dir)
	if err != nil {
		return refused("%v", err)
	}
	data, ok, err := repo.ShowFile("HEAD", layout.Tree)
	if err != nil || !ok {
		return exit.Errorf(exit.RunnerError, "read %s at HEAD: %v", layout.Tree, err)
	}
	root, ps := tree.Load(data)
	if len(ps) > 0 {
		return refused("%s at HEAD is invalid (%d errors, first: %s)", layout.Tree, len(ps), ps[0])
	}
	n, _ := tree.Find(root, c.ID)
	switch {
	case n == nil:
		return refused("no node %s in %s", c.ID, layout.Tree)
	case !n.IsWaiting():
		return refused("node %s does not wait for an answer (runner-status lists the questions)", c.ID)
	}
	rel, err := answer.Queue(env.Dir, answer.Queued{NodeID: c.ID, Question: n.Waiting, Answer: text, By: c.By}, time.Now())
	if errors.Is(err, cancel.Refused) {
		return refused("%v", err)
	}
	if err != nil {
		return exit.Errorf(exit.RunnerError, "queue the answer: %v", err)
	}
	fmt.Fprintf(env.Stdout, "queued=%s node=%s\n", rel, c.ID)
	env.Warnf("a runner works in this repository: the answer is queued and committed before its next iteration")
	return nil
}

// answerChange moves the node's question and the answer into its answers
// and clears waiting; with question set, only while the node still waits
// on exactly that question (a queued answer).
func answerChange(text, question string) func(n *tree.Node, at string, data []byte) ([]byte, error) {
	return func(n *tree.Node, at string, data []byte) ([]byte, error) {
		switch {
		case !n.IsWaiting():
			return nil, refused("node %s does not wait for an answer (runner-status lists the questions)", n.ID)
		case question != "" && n.Waiting != question:
			return nil, refused("node %s now asks another question than the one answered", n.ID)
		case len(n.Answers) >= tree.MaxAnswers:
			return nil, refused("node %s has %d answers, the most a node keeps", n.ID, tree.MaxAnswers)
		}
		data, err := sjson.SetBytes(data, field(at, "answers.-1"), tree.Answer{Question: n.Waiting, Answer: text})
		if err == nil {
			data, err = sjson.DeleteBytes(data, field(at, "waiting"))
		}
		return data, err
	}
}

// ApplyCmd is `tree-edit apply-answers`.
type ApplyCmd struct{}

// Run commits the queued answers, oldest first.
func (c *ApplyCmd) Run(env *cli.Env) error {
	release, err := lockHeld(env)
	if err != nil {
		return err
	}
	defer release()
	qs, bad := answer.Pending(env.Dir)
	for _, b := range bad {
		env.Warnf("%s/%s: not a queued answer (%v): removed", layout.Answers, b.File, b.Err)
		if err := answer.Remove(env.Dir, answer.Queued{File: b.File}); err != nil {
			return exit.Errorf(exit.RunnerError, "remove %s/%s: %v", layout.Answers, b.File, fsutil.Cause(err))
		}
	}
	for _, q := range qs {
		if _, err := editHeld(env, subject.ActionAnswer, q.NodeID, answerChange(q.Answer, q.Question)); err != nil {
			var ee *exit.Error
			if !errors.As(err, &ee) || ee.Code != exit.Negative {
				return err
			}
			env.Warnf("the answer queued by %s at %s for node %s is dropped: %v", q.By, q.At, q.NodeID, err)
		}
		if err := answer.Remove(env.Dir, q); err != nil {
			return exit.Errorf(exit.RunnerError, "remove %s/%s: %v", layout.Answers, q.File, fsutil.Cause(err))
		}
	}
	return nil
}

// errLocked marks the refusal of lock when a runner holds .runner/lock.
var errLocked = errors.New("a runner holds " + layout.Lock)

// lockHeld is lock for the runner's own commands: a descriptor 9 that is
// .runner/lock, inherited from runner-step or runner-loop (which hold the
// lock on it), shares their hold (runlock.TakeShared).
func lockHeld(env *cli.Env) (func(), error) { return takeLock(env, runlock.TakeShared) }
