// Command tree-validate: see `tree-validate --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/treevalidate"
)

func main() { os.Exit(treevalidate.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
