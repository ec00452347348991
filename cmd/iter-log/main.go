// Command iter-log: see `iter-log --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/iterlog"
)

func main() { os.Exit(iterlog.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
