package seal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/seal"
)

// runDir makes n iteration directories shaped like a run's on a
// 100-node tree: two tree snapshots of 45 KB and ten small logs each
// (1,000 of them are 100 MB on disk).
func runDir(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	tree := strings.Repeat("x", 45<<10)
	for i := 1; i <= n; i++ {
		dir := filepath.Join(root, fmt.Sprintf("%04d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		files := map[string]string{"tree.before.json": tree, "tree.after.json": tree}
		for _, f := range []string{"begin.json", "agent.json", "meta.json", "guard.json", "update.json", "output.json", "diff.patch", "prompt.md", "guard.log", "executor.log"} {
			files[f] = strings.Repeat("y", 1<<10)
		}
		for f, data := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}

// One session's seal of a run's iteration logs (Take, then Restore with
// nothing changed) as the run grows: Take reads and hashes every file
// twice; TakeIndexed, once the earlier iterations are indexed, reads only
// the current one's.
func BenchmarkSealSession(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		root := runDir(b, n)
		current := fmt.Sprintf("%04d/", n)
		b.Run(fmt.Sprintf("Take/iterations=%d", n), func(b *testing.B) {
			for b.Loop() {
				s, err := seal.Take(root, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Restore(); err != nil {
					b.Fatal(err)
				}
			}
		})
		ix := seal.Index{Rel: "seal-index", Store: &memStore{blobs: map[string][]byte{}},
			Settled: func(rel string) bool { return !strings.HasPrefix(rel, current) },
			Now:     func() time.Time { return time.Now().Add(time.Second) }}
		if _, err := seal.TakeIndexed(root, nil, ix); err != nil { // index the earlier iterations
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("TakeIndexed/iterations=%d", n), func(b *testing.B) {
			for b.Loop() {
				s, err := seal.TakeIndexed(root, nil, ix)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Restore(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
