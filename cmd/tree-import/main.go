// Command tree-import: see `tree-import --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/treeimport"
)

func main() { os.Exit(treeimport.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
