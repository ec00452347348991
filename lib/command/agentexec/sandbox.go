package agentexec

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/sandbox"
)

// confine sets up [sandbox] mode = "bwrap" or "docker" for the session
// (issue 15): the agent may write the repository, its output file and the
// runner files DESIGN.md decision 4 leaves to it, nothing else of the
// runner's. The output file is created empty beforehand so that it can be
// bound writable. release, called once the session has ended and before
// it is judged (again later does nothing), removes what the sandbox left
// (a container) and the output file again when the agent left it empty;
// its error says a container could not be removed. Under docker,
// containers a killed runner left for this repository are removed first.
// The mode goes into rec. Without a sandbox, release does nothing.
func confine(env *cli.Env, req *agent.Request, cfg config.Sandbox, root, outPath string, rec *iterdir.Agent) (release func() error, err error) {
	if !cfg.Confined() {
		return func() error { return nil }, nil
	}
	rec.Sandbox = cfg.Mode
	if cfg.Mode == config.SandboxDocker {
		if n, err := sandbox.RemoveLeftovers(cfg, root); err != nil {
			return nil, err
		} else if n > 0 {
			env.Warnf("removed %d container(s) an interrupted session left running", n)
		}
	}
	if err := os.WriteFile(outPath, nil, 0o644); err != nil {
		return nil, fmt.Errorf("create the output file: %w", err)
	}
	removeEmpty := func() {
		if st, err := os.Lstat(outPath); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
			os.Remove(outPath)
		}
	}
	abs := func(rel []string) []string {
		var out []string
		for _, f := range rel {
			out = append(out, filepath.Join(root, filepath.FromSlash(f)))
		}
		return out
	}
	c, err := sandbox.Open(cfg, root, append(abs(sandbox.AgentWritable), outPath), abs(sandbox.AgentReadOnly), sandbox.Session{Role: "agent", Dir: req.IterDir})
	if err != nil {
		removeEmpty()
		return nil, err
	}
	req.Sandbox, req.InContainer = c.Wrap, cfg.Mode == config.SandboxDocker
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
