// Command tree-edit: see `tree-edit --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/treeedit"
)

func main() { os.Exit(treeedit.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
