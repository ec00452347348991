// Command step-end: see `step-end --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/stepend"
)

func main() { os.Exit(stepend.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
