// Command schemaonly does nothing but link santhosh-tekuri/jsonschema/v5:
// the floor bench/tree-bench.sh holds tree-validate's start to (the target:
// tree-validate at 100 nodes within 1.3x of it), v5's package init being
// the part of a start no command that links the library can avoid.
package main

import (
	_ "github.com/santhosh-tekuri/jsonschema/v5"
)

func main() {}
