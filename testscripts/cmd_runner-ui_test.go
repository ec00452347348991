package testscripts

import "github.com/treeloop/treeloop/lib/command/runnerui"

func init() { commands["runner-ui"] = runnerui.Main }
