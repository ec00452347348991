// Command runner-status: see `runner-status --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnerstatus"
)

func main() { os.Exit(runnerstatus.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
