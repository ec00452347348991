package ui

import (
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/layout"
)

// requestCancel asks the run in root to stop (DESIGN.md decision 12)
// through lib/cancel.Request, the operator's one way to cancel: the running
// session's judge is told first, so the cancel counts as the operator's,
// not the agent's; then .runner/cancel is written. The loop
// stops before its next iteration, and a running agent or guard is stopped
// and its iteration recorded as interrupted. by names who asked. It is
// runner-ui's only write.
func requestCancel(root, by string) error {
	dir := filepath.Join(root, layout.Runner)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return errNoRunner
	}
	return cancel.Request(root, by)
}
