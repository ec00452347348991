// Command gentree writes a valid, canonical task tree of N nodes to stdout,
// for benchmarks: branching factor 10, the first half of the leaves (in
// selection order) passed and internal passes derived, so selection walks
// past passed subtrees. -passed 0 leaves every node open: a tree a run
// can work, since a pass the run's history does not back stops the step
// (lib/provenance).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/treeloop/treeloop/lib/tree"
)

func main() {
	n := flag.Int("n", 1000, "number of nodes")
	fanout := flag.Int("fanout", 10, "children per internal node")
	passed := flag.Float64("passed", 0.5, "fraction of the leaves passed, the first in selection order")
	flag.Parse()
	if *n < 1 || *fanout < 1 || *passed < 0 || *passed > 1 {
		fmt.Fprintln(os.Stderr, "gentree: -n and -fanout must be >= 1, -passed between 0 and 1")
		os.Exit(80)
	}
	root := Generate(*n, *fanout, *passed)
	os.Stdout.Write(tree.Encode(root))
}

// Generate builds a breadth-first tree of n nodes, the first fraction
// passed of its leaves passed.
func Generate(n, fanout int, passed float64) *tree.Node {
	mk := func(i int) *tree.Node {
		return &tree.Node{
			ID: fmt.Sprintf("n%06d", i), Order: int64(i), Title: fmt.Sprintf("Node %d", i),
			Goal:       fmt.Sprintf("Deliver part %d of the benchmark goal, with tests.", i),
			Acceptance: []string{"tests pass", fmt.Sprintf("part %d documented", i)},
			Next:       tree.NextExecute, MaxAttempts: 3, Children: []*tree.Node{},
		}
	}
	nodes := []*tree.Node{mk(0)}
	nodes[0].ID = "root"
	for i := 1; i < n; i++ {
		c := mk(i)
		p := nodes[(i-1)/fanout]
		p.Children = append(p.Children, c)
		nodes = append(nodes, c)
	}
	var leaves []*tree.Node
	var walk func(x *tree.Node)
	walk = func(x *tree.Node) {
		if x.IsLeaf() {
			leaves = append(leaves, x)
		}
		for _, c := range x.Children {
			walk(c)
		}
	}
	walk(nodes[0])
	for _, l := range leaves[:int(float64(len(leaves))*passed)] {
		l.Passes = true
	}
	tree.DerivePasses(nodes[0])
	return nodes[0]
}
