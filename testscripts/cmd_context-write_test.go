package testscripts

import "github.com/treeloop/treeloop/lib/command/contextwrite"

func init() { commands["context-write"] = contextwrite.Main }
