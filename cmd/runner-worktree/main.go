// Command runner-worktree: see `runner-worktree --help`.
package main

import (
	"os"

	"github.com/treeloop/treeloop/lib/command/runnerworktree"
)

func main() { os.Exit(runnerworktree.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
