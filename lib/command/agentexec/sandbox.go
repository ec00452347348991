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
func confine(req *agent.Request, cfg config.Sandbox, root, outPath string) (release func(), err error) {
	if err := os.WriteFile(outPath, nil, 0o644); err != nil {
		return nil, fmt.Errorf("create the output file: %w", err)
	}
	release = func() {
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
	sb, err := sandbox.New(cfg, root, append(abs(sandbox.AgentWritable), outPath), abs(sandbox.AgentReadOnly))
	if err != nil {
		release()
		return nil, err
	}
	req.Sandbox = sb.Wrap
	return release, nil
}
