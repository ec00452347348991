package testscripts

import "github.com/treeloop/treeloop/lib/command/runnerworktree"

func init() { commands["runner-worktree"] = runnerworktree.Main }
