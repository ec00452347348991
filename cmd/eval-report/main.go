// Command eval-report: see `eval-report --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/evalreport"
)

func main() { os.Exit(evalreport.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
