// Command runner-check: see `runner-check --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnercheck"
)

func main() { os.Exit(runnercheck.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
