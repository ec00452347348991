package testscripts

import "github.com/treeloop/treeloop/lib/command/runnerstart"

func init() { commands["runner-start"] = runnerstart.Main }
