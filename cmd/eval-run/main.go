// Command eval-run: see `eval-run --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/evalrun"
)

func main() { os.Exit(evalrun.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
