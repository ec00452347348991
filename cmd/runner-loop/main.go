// Command runner-loop runs runner-step until a stop: tools/runner-loop,
// embedded.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/porcelain"
	"github.com/treeloop/treeloop/tools"
)

func main() {
	os.Exit(porcelain.Main("runner-loop", tools.RunnerLoop, tools.ShSetup, os.Args[1:], os.Stderr))
}
