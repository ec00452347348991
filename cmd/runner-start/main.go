// Command runner-start: see `runner-start --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnerstart"
)

func main() { os.Exit(runnerstart.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
