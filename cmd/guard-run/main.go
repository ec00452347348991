// Command guard-run: see `guard-run --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/guardrun"
)

func main() { os.Exit(guardrun.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
