// Command loop-commit: see `loop-commit --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/loopcommit"
)

func main() { os.Exit(loopcommit.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
