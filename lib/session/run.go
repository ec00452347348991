package session

import (
	"fmt"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/stepctx"
)

// Spec is what one command's session differs by (Run): agent-exec's and
// guard-run's.
type Spec struct {
	Iter string // the iteration directory (--iter), relative to the -C directory
	Base string // the step's base (--base); "" when the command runs alone
	// Tools reads the node's tools.json with config.toml
	// (stepctx.StartWithTools); AtBase are more files read from the base
	// with it (stepctx.StartWith, Iteration.AtBase).
	Tools  bool
	AtBase []string
	// Seal takes the seal before the session and checks it after; the
	// guard run alone (no base) is not sealed.
	Seal bool
	// Own are the files of the iteration directory the command writes
	// during the session (Seal).
	Own []string
	// Who names the session in the seal's reasons ("the agent", "the
	// guard"), Session in the cancel file's and the answers' ("the
	// agent's session", "the guard"); Fails is what the session's own
	// cancel file costs it ("the iteration is an agent error").
	Who, Session, Fails string
	// Prepare, when set, runs once the iteration is loaded, before the
	// seal's own error is told and the session is held; its error wins.
	Prepare func(it stepctx.Iteration, repo *git.Repo) error
	// Confinement, when set, is the sandbox the session runs in, for Hold.
	Confinement func(it stepctx.Iteration) Confinement
	// Tell, when set, is told the seal's digest once it is held, before the
	// session starts (--seal-fd).
	Tell func(digest string)
	// Checks, when set, are the command's own checks after the seal's,
	// one reason each.
	Checks func() ([]string, error)
}

// Outcome is how a session ended (Run): the iteration it ran in, who
// created the cancel file during it, and the violations: the seal's
// reasons (Session.Check), the command's own (Spec.Checks), a cancel file
// the session created itself, the answers it forged.
type Outcome struct {
	Iteration  stepctx.Iteration
	Verdict    cancel.Verdict
	Violations []string
}

// Run is one session of a command, the same sequence for the agent's
// and the guard's (DESIGN.md decisions 12, 21): git made hermetic; the
// iteration loaded (stepctx.Start) while the seal is taken; Prepare; the
// cancel judge listening and the step's signals and the cancel file
// interrupting (cli.Interrupt, held from here until Run returns, the
// checks included); the seal held and told; fn, the session itself, given
// the interruption; the judge's verdict; the checks, putting back what
// the session may not change. An error from fn ends the session
// unchecked (the judge's verdict dropped) and is returned as it is. Errors
// carry their exit code.
func Run(env *cli.Env, spec Spec, fn func(in *cli.Interrupt, it stepctx.Iteration) error) (Outcome, error) {
	var out Outcome
	it, sealed, err := load(env, spec)
	if err != nil {
		return out, err
	}
	out.Iteration = it
	protected := it.Config.Protected()
	// A cancel file the session's own processes create is void.
	judge, err := cancel.Listen(env.Dir)
	if err != nil {
		return out, exit.Errorf(exit.RunnerError, "%v (is another runner working in this repository?)", err)
	}
	in := cli.NotifyInterrupt()
	defer in.Stop()
	if err := in.WatchCancelFile(filepath.Join(env.Dir, layout.Cancel)); err != nil {
		env.Warnf("cannot watch %s: %v", layout.Cancel, err)
	}
	if sealed != nil {
		var c Confinement
		if spec.Confinement != nil {
			c = spec.Confinement(it)
		}
		if err := sealed.Hold(protected, c); err != nil {
			return out, exit.Errorf(exit.RunnerError, "%v", err)
		}
		if spec.Tell != nil {
			spec.Tell(sealed.Digest())
		}
	}
	if err := fn(in, it); err != nil {
		judge.Close(false)
		return out, err
	}
	out.Verdict = judge.Close(in.Cause() == cli.CauseCancelFile)
	if out.Violations, err = check(spec, sealed, protected); err != nil {
		return out, err
	}
	if out.Verdict.By == cancel.BySession {
		out.Violations = append(out.Violations, fmt.Sprintf("%s created %s with no operator's request (runner-cancel): it stops the loop, but %s (an attempt consumed)", spec.Session, layout.Cancel, spec.Fails))
	}
	out.Violations = append(out.Violations, ForgedAnswers(spec.Session, out.Verdict.ForgedAnswers)...)
	return out, nil
}

// load makes git hermetic (the user's git config as it is now, before a
// session could change it, for every git process of this command and
// runner-step's, when it started this one), loads the iteration and, with
// Spec.Seal, takes the seal while config.toml is read from the base
// (both start git processes), then runs Prepare. A config.toml that
// cannot be read, then Prepare's error, win over the seal's.
func load(env *cli.Env, spec Spec) (stepctx.Iteration, *Session, error) {
	var it stepctx.Iteration
	if err := git.Hermetic(env.Dir); err != nil {
		return it, nil, exit.Wrap(exit.RunnerError, err)
	}
	loading, err := stepctx.StartWith(env, spec.Iter, spec.Base, spec.Tools, spec.AtBase...)
	if err != nil {
		return it, nil, err
	}
	repo := loading.Repo
	var sealed *Session
	var sealErr error
	if spec.Seal {
		if repo == nil {
			if repo, err = git.Open(env.Dir); err != nil {
				return it, nil, exit.Wrap(exit.RunnerError, err)
			}
		}
		// Everything the runner wrote in the run's iteration directories
		// is held from here on: the session may write the command's own
		// files, nothing else there.
		sealed, sealErr = Seal(repo, loading.Begin.RunID, loading.Dir, loading.Begin.Branch, loading.Base, spec.Own...)
	}
	if it, err = loading.Wait(); err != nil {
		return it, nil, err
	}
	if spec.Prepare != nil {
		if err := spec.Prepare(it, repo); err != nil {
			return it, nil, err
		}
	}
	if sealErr != nil {
		return it, nil, exit.Errorf(exit.RunnerError, "%v", sealErr)
	}
	return it, sealed, nil
}

// check is the checks after the session: the seal's (puts back what the
// session may not change), then the command's own.
func check(spec Spec, sealed *Session, protected []string) ([]string, error) {
	var violations []string
	if sealed != nil {
		var err error
		if violations, err = sealed.Check(spec.Who, protected); err != nil {
			return nil, exit.Errorf(exit.RunnerError, "%v", err)
		}
	}
	if spec.Checks == nil {
		return violations, nil
	}
	more, err := spec.Checks()
	if err != nil {
		return nil, err
	}
	return append(violations, more...), nil
}

// ForgedAnswers words the answers removed from the queue (cancel.Judge):
// files of .runner/answers/ that appeared during a session without an
// operator's tree-edit answer, who naming the session.
func ForgedAnswers(who string, names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, fmt.Sprintf("%s wrote %s/%s with no operator's tree-edit answer: removed (only an operator answers a question)", who, layout.Answers, n))
	}
	return out
}
