package agentexec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/sandbox"
	"github.com/treeloop/treeloop/lib/session"
	"github.com/treeloop/treeloop/lib/vocab"
)

// confine sets up [sandbox] mode = "bwrap" or "docker" for the session
// The agent may write the repository, its output files
// (agent.SandboxFiles: the output, Codex's last message) and the runner
// files DESIGN.md decision 4 leaves to it, nothing else of the runner's.
// The output files are created empty beforehand so that they can be bound
// writable. release, called once the session has ended and before it is
// judged (again later does nothing), removes what the sandbox left (a
// container) and the output files again when the agent left them empty;
// its error says a container could not be removed. Under docker,
// containers a killed runner left for this repository are removed first.
// The mode goes into rec. The dependency directories deps (repository-
// relative: sandbox.DependencyDirs) are shown read-only. Without a
// sandbox, release does nothing.
func confine(env *cli.Env, req *agent.Request, cfg config.Config, root, outPath string, deps []string, rec *iterdir.Agent) (release func() error, err error) {
	sb := cfg.Sandbox
	if !sb.Confined() {
		return func() error { return nil }, nil
	}
	rec.Sandbox = sb.Mode
	if sb.Mode == config.SandboxDocker {
		if n, err := sandbox.RemoveLeftovers(sb, root); err != nil {
			return nil, err
		} else if n > 0 {
			env.Warnf("removed %s an interrupted session left running", vocab.Plural(n, "container", "containers"))
		}
	}
	// The node's artifacts directory exists before the session, so that
	// the sandbox binds .runner/nodes writable (it binds only what exists)
	// and the agent can save its files there (seed 000 §3.4). What it made
	// goes again once the session left it empty: git keeps no empty
	// directory, but every git status and add of every later step would
	// read one per node worked.
	artifacts := filepath.Join(root, filepath.FromSlash(layout.NodeArtifacts(req.NodeID)))
	missing := missingDirs(artifacts, root)
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		return nil, fmt.Errorf("create the node's artifacts directory: %w", err)
	}
	made := madeDirs(missing)
	files := agent.SandboxFiles(cfg.Agent, req.IterDir, outPath)
	removeEmpty := func() {
		for _, f := range files {
			if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
				os.Remove(f)
			}
		}
		removeMade(made)
	}
	for _, f := range files {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			removeEmpty()
			return nil, fmt.Errorf("create %s: %w", filepath.Base(f), err)
		}
	}
	readOnly := append(abs(root, sandbox.AgentReadOnly), abs(root, deps)...)
	c, err := sandbox.Open(sb, root, writable(cfg, root, req.IterDir, outPath), readOnly, sandbox.Session{Role: "agent", Dir: req.IterDir})
	if err != nil {
		removeEmpty()
		return nil, err
	}
	req.Sandbox, req.InContainer = c.Wrap, sb.Mode == config.SandboxDocker
	req.Restartable = sandbox.Restartable
	released := false
	return func() error {
		if released {
			return nil
		}
		released = true
		defer removeEmpty()
		return c.Release()
	}, nil
}

// abs are the paths rel (slash paths relative to root), absolute.
func abs(root string, rel []string) []string {
	var out []string
	for _, r := range rel {
		out = append(out, filepath.Join(root, filepath.FromSlash(r)))
	}
	return out
}

// writable are the runner's files the agent may write under the sandbox,
// absolute: sandbox.AgentWritable and its output files
// (agent.SandboxFiles) in the iteration's directory iterDir.
func writable(cfg config.Config, root, iterDir, outPath string) []string {
	return append(abs(root, sandbox.AgentWritable), agent.SandboxFiles(cfg.Agent, iterDir, outPath)...)
}

// confinement is the sandbox confine runs the session in, for its seal
// (session.Hold): the zero Confinement when it runs unconfined.
func confinement(cfg config.Config, root, iterDir, outPath string) session.Confinement {
	if !cfg.Sandbox.Confined() {
		return session.Confinement{}
	}
	return session.Confinement{Sandbox: cfg.Sandbox, Root: root, Writable: writable(cfg, root, iterDir, outPath)}
}

// missingDirs are the directories os.MkdirAll(dir) would create below
// root (dir itself and the parents that do not exist), deepest first.
func missingDirs(dir, root string) []string {
	var out []string
	for d := dir; len(d) > len(root) && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		out = append(out, d)
	}
	return out
}

// madeDir is a directory the runner made, as it was then.
type madeDir struct {
	path string
	info os.FileInfo
}

// madeDirs are the directories of paths as they are now (just made).
func madeDirs(paths []string) []madeDir {
	var out []madeDir
	for _, p := range paths {
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			out = append(out, madeDir{p, st})
		}
	}
	return out
}

// removeMade removes the directories the runner made that are still
// those very directories and empty, deepest first: one a session swapped
// for a symlink or another directory stays as it is, for the checks after
// the session to see (the session has ended: nothing of it runs to swap
// it again).
func removeMade(made []madeDir) {
	for _, d := range made {
		if st, err := os.Lstat(d.path); err != nil || !st.IsDir() || !os.SameFile(st, d.info) {
			return
		}
		if os.Remove(d.path) != nil {
			return // not empty: it and its parents stay
		}
	}
}

// dependencies are the dependency directories of kept (evidence.Kept,
// listed before the session) when the session runs confined, for confine
// to show read-only; none without a sandbox.
func dependencies(cfg config.Config, kept []evidence.Dir) []string {
	if !cfg.Sandbox.Confined() {
		return nil
	}
	var deps []string
	for _, d := range kept {
		deps = append(deps, d.Rel)
	}
	return deps
}
