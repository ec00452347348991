package testscripts

import "github.com/treeloop/treeloop/lib/command/treeedit"

func init() { commands["tree-edit"] = treeedit.Main }
