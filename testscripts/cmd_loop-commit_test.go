package testscripts

import "github.com/treeloop/treeloop/lib/command/loopcommit"

func init() { commands["loop-commit"] = loopcommit.Main }
