package testscripts

import "github.com/treeloop/treeloop/lib/command/treeimport"

func init() { commands["tree-import"] = treeimport.Main }
