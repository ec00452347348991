package testscripts

import "github.com/treeloop/treeloop/lib/command/guardrun"

func init() { commands["guard-run"] = guardrun.Main }
