package testscripts

import "github.com/treeloop/treeloop/lib/command/runnerstatus"

func init() { commands["runner-status"] = runnerstatus.Main }
