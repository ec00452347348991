// Command tree-validate: see `tree-validate --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/treevalidate"
	_ "github.com/treeloop/treeloop/lib/schema/full" // tree-validate words every schema problem
)

func main() { os.Exit(treevalidate.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
