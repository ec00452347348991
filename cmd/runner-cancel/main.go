// Command runner-cancel: see `runner-cancel --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnercancel"
)

func main() { os.Exit(runnercancel.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
