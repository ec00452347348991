// Command runner-enter: see `runner-enter --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnerenter"
)

func main() { os.Exit(runnerenter.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
