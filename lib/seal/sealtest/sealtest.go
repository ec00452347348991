// Package sealtest makes a run's iteration logs for the seal's benchmarks
// (lib/seal, lib/session).
package sealtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteRun makes n iteration directories (0001 ... n) under runDir, shaped
// like a run's on a 100-node tree: two tree snapshots of 45 KB and ten
// small logs of 1 KB each (1,000 of them are 100 MB on disk).
func WriteRun(runDir string, n int) error {
	tree := strings.Repeat("x", 45<<10)
	small := strings.Repeat("y", 1<<10)
	for i := 1; i <= n; i++ {
		dir := filepath.Join(runDir, fmt.Sprintf("%04d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		files := map[string]string{"tree.before.json": tree, "tree.after.json": tree}
		for _, f := range []string{"begin.json", "agent.json", "meta.json", "guard.json", "update.json", "output.json", "diff.patch", "prompt.md", "guard.log", "executor.log"} {
			files[f] = small
		}
		for f, data := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
