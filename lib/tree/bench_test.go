package tree

import (
	"os"
	"testing"
)

// BenchmarkLoad measures strict decoding, schema validation and the
// invariants of a generated 1,000-node tree (BENCH_TREE overrides the file).
func BenchmarkLoad(b *testing.B) {
	path := os.Getenv("BENCH_TREE")
	if path == "" {
		b.Skip("set BENCH_TREE to a tree file (bench/gentree -n 1000)")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, ps := Load(data); len(ps) > 0 {
			b.Fatal(ps)
		}
	}
}
