package tree

import (
	"fmt"
	"testing"
)

// benchTree is a canonical tree of n nodes, fanout 10, breadth first.
func benchTree(n int) []byte {
	nodes := make([]*Node, n)
	for i := range nodes {
		nodes[i] = &Node{
			ID: fmt.Sprintf("n%06d", i), Order: int64(i % 10), Title: fmt.Sprintf("Node %d", i),
			Goal: "Do the work of this node and test it.", Acceptance: []string{"tests pass"},
			Next: NextExecute, MaxAttempts: 3, Children: []*Node{},
		}
		if i > 0 {
			p := nodes[(i-1)/10]
			p.Children = append(p.Children, nodes[i])
			p.Next = NextDecompose
		}
	}
	return Encode(nodes[0])
}

// BenchmarkLoad measures strict decoding, schema validation and the
// invariants per tree size.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		data := benchTree(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, ps := Load(data); len(ps) > 0 {
					b.Fatal(ps)
				}
			}
		})
	}
}

// BenchmarkPrevChecks measures what tree-validate --prev adds to loading
// the two trees: passed-node immutability and the runner-owned fields.
func BenchmarkPrevChecks(b *testing.B) {
	data := benchTree(10000)
	prev, _ := Load(data)
	next, _ := Load(data)
	b.Run("immutability", func(b *testing.B) {
		for b.Loop() {
			Immutability(prev, next)
		}
	})
	b.Run("runner-owned", func(b *testing.B) {
		for b.Loop() {
			RunnerOwnedChanges(prev, next, ByHuman, nil)
		}
	})
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			Load(data)
		}
	})
}

// BenchmarkEncode measures the canonical encoding per tree size.
func BenchmarkEncode(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		root, _ := Load(benchTree(n))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				Encode(root)
			}
		})
	}
}

// BenchmarkParse measures the streaming fast path (fastParse) beside the
// plain path it replaces (parseFull: jsonstrict and the JSON Schema
// validator) per tree size: bench/fastpaths.md.
func BenchmarkParse(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		data := benchTree(n)
		b.Run(fmt.Sprintf("nodes=%d/fast", n), func(b *testing.B) {
			for b.Loop() {
				if _, ok := fastParse(data); !ok {
					b.Fatal("the fast path gave up")
				}
			}
		})
		b.Run(fmt.Sprintf("nodes=%d/full", n), func(b *testing.B) {
			for b.Loop() {
				if _, ps := parseFull(data); len(ps) > 0 {
					b.Fatal(ps)
				}
			}
		})
	}
}

// BenchmarkEqual measures Equal of two equal trees of 10,000 nodes: every
// field of every node compared.
func BenchmarkEqual(b *testing.B) {
	data := benchTree(10000)
	x, _ := Load(data)
	y, _ := Load(data)
	for b.Loop() {
		if !Equal(x, y) {
			b.Fatal("not equal")
		}
	}
}
