// Command context-write: see `context-write --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/contextwrite"
)

func main() { os.Exit(contextwrite.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
