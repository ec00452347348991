// Command runner-ui: see `runner-ui --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnerui"
)

func main() { os.Exit(runnerui.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
