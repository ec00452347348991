// Command runner-export: see `runner-export --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnerexport"
)

func main() { os.Exit(runnerexport.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
