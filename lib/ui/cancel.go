package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
)

// requestCancel asks the run in root to stop by writing .runner/cancel
// (DESIGN.md decision 12): the loop stops before its next iteration, and
// a running agent or guard is stopped and its iteration recorded as
// interrupted. by names who asked. It is runner-ui's only write.
func requestCancel(root, by string) error {
	dir := filepath.Join(root, layout.Runner)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return errNoRunner
	}
	line := fmt.Sprintf("by=%s at=%s\n", by, time.Now().UTC().Format(time.RFC3339))
	return fsutil.WriteAtomic(filepath.Join(root, layout.Cancel), []byte(line), 0o644)
}
