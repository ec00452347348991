package agentexec

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/sandbox"
)

// confine sets up [sandbox] mode = "bwrap" for the session (issue 15): the
// agent may write the repository, its output file and the runner files
// DESIGN.md decision 4 leaves to it, nothing else of the runner's. The
// output file is created empty beforehand so that it can be bound
// writable; release removes it again when the agent left it empty.
func confine(req *agent.Request, cfg config.Agent, sb config.Sandbox, root, outPath string) (release func(), err error) {
	files := agent.SandboxFiles(cfg, req.IterDir, outPath)
	for _, f := range files {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			return nil, fmt.Errorf("create %s: %w", filepath.Base(f), err)
		}
	}
	release = func() {
		for _, f := range files {
			if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() && st.Size() == 0 {
				os.Remove(f)
			}
		}
	}
	abs := func(rel []string) []string {
		var out []string
		for _, f := range rel {
			out = append(out, filepath.Join(root, filepath.FromSlash(f)))
		}
		return out
	}
	box, err := sandbox.New(sb, root, append(abs(sandbox.AgentWritable), files...), abs(sandbox.AgentReadOnly))
	if err != nil {
		release()
		return nil, err
	}
	req.Sandbox = box.Wrap
	return release, nil
}
