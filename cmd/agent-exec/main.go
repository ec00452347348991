// Command agent-exec: see `agent-exec --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/agentexec"
)

func main() { os.Exit(agentexec.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
