// Command tree-update: see `tree-update --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/treeupdate"
)

func main() { os.Exit(treeupdate.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
