// Command step-begin: see `step-begin --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/stepbegin"
)

func main() { os.Exit(stepbegin.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
