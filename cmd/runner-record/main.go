// Command runner-record: see `runner-record --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnerrecord"
)

func main() { os.Exit(runnerrecord.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
