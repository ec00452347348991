// Command runner-step runs one iteration: tools/runner-step, embedded.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/porcelain"
	"github.com/treeloop/treeloop/tools"
)

func main() {
	os.Exit(porcelain.Main("runner-step", tools.RunnerStep, tools.ShSetup, os.Args[1:], os.Stderr))
}
