// Command runner-init: see `runner-init --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnerinit"
)

func main() { os.Exit(runnerinit.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
