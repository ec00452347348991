// Command tree-select: see `tree-select --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/treeselect"
)

func main() { os.Exit(treeselect.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
