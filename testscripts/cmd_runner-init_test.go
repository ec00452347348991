package testscripts

import "github.com/treeloop/treeloop/lib/command/runnerinit"

func init() { commands["runner-init"] = runnerinit.Main }
