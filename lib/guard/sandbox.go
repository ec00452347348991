package guard

import (
	"fmt"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/sandbox"
	"github.com/treeloop/treeloop/lib/vocab"
)

// confine turns spec into the guard's confined run when the sandbox
// confines the guard ([sandbox] guard, the default under a sandbox),
// without any of the agent's runner files writable; dir is the
// iteration's directory. Under docker, containers a killed runner left
// for this repository are removed first. release, called once the guard
// has ended, removes what the sandbox left (a container); its error says
// one could not be removed. Without a sandbox, release does nothing.
// Under bwrap the guard runs in bwrap's own PID namespace (no session
// init); under docker spec no longer kills escaped processes (see below).
// The work tree's dependency directories among ignored (git's ignored
// paths: evidence.DependencyDirs) are shown read-only, as the agent sees
// them: a test cannot change the install the next guard runs on.
func confine(env *cli.Env, cfg config.Sandbox, dir string, ignored, writable []string, spec *proc.Spec) (release func() error, err error) {
	var deps []string
	for _, d := range evidence.DependencyDirs(env.Dir, ignored) {
		deps = append(deps, filepath.Join(env.Dir, filepath.FromSlash(d)))
	}
	return confineIn(env, cfg, "", deps, dir, "guard", writable, spec)
}

// confineIn is confine for a command working in scratch, a directory that
// is no repository (a witness's checkout), when scratch is not "", named
// role for a container, with the paths of shown shown read-only (the work
// tree's dependency directories, which the scratch links to); the paths of
// writable are writable too.
func confineIn(env *cli.Env, cfg config.Sandbox, scratch string, shown []string, dir, role string, writable []string, spec *proc.Spec) (release func() error, err error) {
	release = func() error { return nil }
	if !cfg.ConfinesGuard() {
		return release, nil
	}
	if cfg.Mode == config.SandboxDocker {
		if n, err := sandbox.RemoveLeftovers(cfg, env.Dir); err != nil {
			return release, fmt.Errorf("sandbox: %w", err)
		} else if n > 0 {
			env.Warnf("removed %s an interrupted session left running", vocab.Plural(n, "container", "containers"))
		}
	}
	var c sandbox.Confiner
	if scratch != "" {
		c, err = sandbox.OpenDir(cfg, scratch, writable, shown, sandbox.Session{Role: "witness-" + role, Dir: dir})
	} else {
		c, err = sandbox.Open(cfg, env.Dir, writable, shown, sandbox.Session{Role: "guard", Dir: dir})
	}
	if err != nil {
		return release, err
	}
	if spec.Argv, err = c.Wrap(spec.Argv, spec.Env); err != nil {
		c.Release()
		return release, err
	}
	// bwrap makes a PID namespace of its own and is its init
	// (--unshare-pid --die-with-parent): the session init would give it
	// a /proc that is not its namespace's.
	spec.OwnNamespace = cfg.Mode == config.SandboxBwrap
	// A start that met a mount going away is started again, not a
	// failed guard.
	sandbox.Restartable(spec)
	// A container's processes are the engine's, not guard-run's
	// descendants (with podman, only through the engine's monitor, which
	// must outlive the client): removing the container ends them.
	spec.KillEscaped = cfg.Mode != config.SandboxDocker
	return func() error {
		if err := c.Release(); err != nil {
			return fmt.Errorf("sandbox: %w (the guard may still run: agent-exec --restore removes it)", err)
		}
		return nil
	}, nil
}

// ignoredFor is the work tree's ignored paths the confined guard's
// dependency directories are found among: j's (listed for the witness or
// the build outputs), else listed here; nil when the guard runs
// unconfined. A list that cannot be made is warned about, and nothing is
// shown read-only.
func ignoredFor(env *cli.Env, cfg config.Config, j Judging) []string {
	if !cfg.Sandbox.ConfinesGuard() || j.Ignored != nil {
		return j.Ignored
	}
	repo, err := git.Open(env.Dir)
	if err == nil {
		var ignored []string
		if ignored, err = repo.Ignored(); err == nil {
			return ignored
		}
	}
	env.Warnf("list the work tree's ignored files: %v (the dependency directories stay writable to the guard)", err)
	return nil
}
