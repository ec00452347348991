package evidence

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkRemoveUnlisted: the walk after every session over a work tree
// of FILES files in directories of 50 (bench/lib.sh's shape), with
// nothing to remove: what each agent's and guard's session pays.
func BenchmarkRemoveUnlisted(b *testing.B) {
	for _, files := range []int{1000, 50000} {
		b.Run(fmt.Sprint(files), func(b *testing.B) {
			root := b.TempDir()
			for i := range files {
				d := filepath.Join(root, "src", fmt.Sprintf("d%d", i/50))
				if i%50 == 0 {
					if err := os.MkdirAll(d, 0o755); err != nil {
						b.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i%50)), []byte("package d\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			since := time.Now()
			b.ResetTimer()
			for b.Loop() {
				if got := RemoveUnlisted(root, since); got != nil {
					b.Fatalf("removed %q", got)
				}
			}
		})
	}
}
