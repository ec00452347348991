// Command tree-update: see `tree-update --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/treeupdate"
	_ "github.com/treeloop/treeloop/lib/schema/full" // tree-update words the schema problems of an agent's output and tree edits
)

func main() { os.Exit(treeupdate.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
