// Package stepctx loads what the commands working inside one iteration
// (context-write, agent-exec, guard-run) read first: the iteration
// directory's begin.json and the repository's config.toml with the
// environment overrides applied.
//
// The step's base: runner-step holds the commit it started from
// in its own shell variable and passes it as --base. A command given a
// base reads config.toml from that commit, never from the work tree an
// agent or a guard may have changed, and refuses a begin.json that does
// not name it.
package stepctx

import (
	"fmt"
	"os"
	"syscall"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// Base is the --base flag of the commands that judge a session.
type Base struct {
	Base string `placeholder:"COMMIT" help:"The commit the step started from (runner-step passes it): the references (tree, config, protected files) are read from it, not from files a session can write."`
}

// SealFD is the --seal-fd flag of the commands that seal a session
// (agent-exec, guard-run).
type SealFD struct {
	SealFD int `name:"seal-fd" placeholder:"N" help:"Write shell assignments to descriptor N for runner-step to eval: seal=<digest> once the session's seal is taken, before the session starts (runner-step keeps it, out of the session's reach, for agent-exec --restore --sealed should this command not finish), said_done=1 when agent-exec's agent said status=done, and exit=<code> as the last line."`
}

// Tell writes the seal line to the descriptor, when one was given; a
// descriptor that cannot take it is a warning (the step then has no
// digest, as after a crash). The descriptor stays open until the process
// exits (close-on-exec: no session inherits it), so a reader of the pipe
// sees its end only when the command has ended, like a reader of stdout.
func (f SealFD) Tell(env *cli.Env, digest string) {
	if f.SealFD <= 2 {
		return
	}
	if _, err := syscall.Write(f.SealFD, []byte("seal="+digest+"\n")); err != nil {
		env.Warnf("--seal-fd %d: %v", f.SealFD, err)
	}
}

// Say writes name=value, value shell-quoted, to the descriptor when one
// was given: a fact of the session for runner-step to eval (said_done=1).
func (f SealFD) Say(env *cli.Env, name, value string) {
	if f.SealFD <= 2 {
		return
	}
	if _, err := syscall.Write(f.SealFD, []byte(name+"="+cli.ShellQuote(value)+"\n")); err != nil {
		env.Warnf("--seal-fd %d: %v", f.SealFD, err)
	}
}

// Exit writes exit=<code> (the exit code err gives, exit.Code) to the
// descriptor, when one was given, as the command's last word: runner-step
// reads its exit there, since bash's wait on the process substitution it
// runs the command in may have lost it (answering 255).
func (f SealFD) Exit(err error) {
	if f.SealFD <= 2 {
		return
	}
	syscall.Write(f.SealFD, []byte(fmt.Sprintf("exit=%d\n", exit.Code(err))))
}

// Iteration is an open iteration.
type Iteration struct {
	Dir    string        // absolute iteration directory
	Begin  iterdir.Begin // its begin.json
	Config config.Config // config.toml after RUNNER_* overrides
	Base   string        // the step's base commit: --base, else begin.json's head_before
	// NodeTools is the selected node's tools.json at the base, read with
	// config.toml in the same git process when asked (StartWithTools and
	// a base); its Rev is "" when it was not read.
	NodeTools git.File
	// AtBase are the files StartWith was asked for, at the base, read with
	// config.toml in the same git process, in the order asked; nil
	// without a base.
	AtBase []git.File
}

// Load reads the iteration at iter (relative to the -C directory), with
// config.toml from base when base is not empty. Errors carry the
// runner-error exit code.
func Load(env *cli.Env, iter, base string) (Iteration, error) {
	l, err := Start(env, iter, base)
	if err != nil {
		return Iteration{}, err
	}
	return l.Wait()
}

// Loading is an iteration being loaded (Start): everything but its
// Config, which Wait gives.
type Loading struct {
	Iteration // Config not read yet
	// Repo is the repository, opened to resolve the base (nil without
	// one).
	Repo *git.Repo
	done chan struct{}
	err  error
}

// Start is Load in two halves: it reads begin.json and
// resolves the base now (no git process for the step's own HEAD), and
// reads config.toml, from base with a git process, in the background; the
// caller works meanwhile (agent-exec and guard-run take their seal) and
// Wait returns the whole Iteration. Errors carry the runner-error exit
// code.
func Start(env *cli.Env, iter, base string) (*Loading, error) {
	return start(env, iter, base, false, nil)
}

// StartWithTools is Start that also reads the selected node's tools.json
// from the base (Iteration.NodeTools), in the git process that reads
// config.toml (agent-exec).
func StartWithTools(env *cli.Env, iter, base string) (*Loading, error) {
	return StartWith(env, iter, base, true)
}

// StartWith is Start that also reads, with a base, the node's tools.json
// (tools, as StartWithTools) and the files atBase names (paths relative
// to the root, Iteration.AtBase) from the base, in the git process that
// reads config.toml (guard-run's judging reads the tree and the caches'
// digest so).
func StartWith(env *cli.Env, iter, base string, tools bool, atBase ...string) (*Loading, error) {
	return start(env, iter, base, tools, atBase)
}

func start(env *cli.Env, iter, base string, tools bool, atBase []string) (*Loading, error) {
	l := &Loading{Iteration: Iteration{Dir: env.Abs(iter)}, done: make(chan struct{})}
	var err error
	if l.Begin, err = iterdir.LoadBegin(l.Dir); err != nil {
		return nil, exit.Wrap(exit.RunnerError, err)
	}
	l.Base = l.Begin.HeadBefore
	if base == "" {
		l.Config, l.err = config.Load(env.Abs(layout.Config), os.LookupEnv)
		if l.err != nil {
			l.err = exit.Wrap(exit.RunnerError, l.err)
		}
		close(l.done)
		return l, nil
	}
	if l.Repo, err = git.Open(env.Dir); err != nil {
		return nil, exit.Wrap(exit.RunnerError, err)
	}
	if l.Base, err = Resolve(l.Repo, base); err != nil {
		return nil, err
	}
	if l.Begin.HeadBefore != l.Base {
		return nil, exit.Errorf(exit.RunnerError, "%s names head_before %s, not the step's base %s: the iteration directory was changed", iterdir.BeginFile, l.Begin.HeadBefore, l.Base)
	}
	go func() {
		defer close(l.done)
		if !tools && len(atBase) == 0 {
			l.Config, l.err = ConfigAt(env, l.Repo, l.Base)
			return
		}
		want := []git.File{{Rev: l.Base, Path: layout.Config}}
		if tools {
			want = append(want, git.File{Rev: l.Base, Path: layout.NodeTools(l.Begin.NodeID)})
		}
		for _, p := range atBase {
			want = append(want, git.File{Rev: l.Base, Path: p})
		}
		files, err := l.Repo.ShowFiles(want...)
		if err == nil {
			err = files[0].Err
		}
		if err != nil {
			l.err = exit.Errorf(exit.RunnerError, "read %s at %s: %v", layout.Config, l.Base, err)
			return
		}
		l.Config, l.err = ConfigFrom(l.Base, files[0].Data, files[0].OK)
		files = files[1:]
		if tools {
			l.NodeTools, files = files[0], files[1:]
		}
		l.AtBase = files
	}()
	return l, nil
}

// Wait returns the iteration once its config.toml is read.
func (l *Loading) Wait() (Iteration, error) {
	<-l.done
	return l.Iteration, l.err
}

// Resolve is the full commit id of rev. Errors carry the runner-error exit
// code.
func Resolve(repo *git.Repo, rev string) (string, error) {
	sha, err := repo.ResolveCommit(rev) // no git process for the step's own HEAD
	if err != nil {
		return "", exit.Errorf(exit.RunnerError, "--base %s: not a commit of this repository", rev)
	}
	return sha, nil
}

// ConfigAt is config.toml as committed in base, with the environment
// overrides (the defaults when base has none).
func ConfigAt(env *cli.Env, repo *git.Repo, base string) (config.Config, error) {
	data, found, err := repo.ShowFile(base, layout.Config)
	if err != nil {
		return config.Config{}, exit.Errorf(exit.RunnerError, "read %s at %s: %v", layout.Config, base, err)
	}
	return ConfigFrom(base, data, found)
}

// ConfigFrom is ConfigAt from config.toml's bytes as read from base
// (found false when base has none).
func ConfigFrom(base string, data []byte, found bool) (config.Config, error) {
	if !found {
		data = nil
	}
	cfg, err := config.FromBytes(fmt.Sprintf("%s (at %.12s)", layout.Config, base), data, os.LookupEnv)
	if err != nil {
		return cfg, exit.Wrap(exit.RunnerError, err)
	}
	return cfg, nil
}
