package seal_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/seal"
	"github.com/treeloop/treeloop/lib/seal/sealtest"
)

// runDir makes n iteration directories shaped like a run's
// (sealtest.WriteRun).
func runDir(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	if err := sealtest.WriteRun(root, n); err != nil {
		b.Fatal(err)
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
