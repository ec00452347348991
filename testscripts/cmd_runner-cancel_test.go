package testscripts

import "github.com/treeloop/treeloop/lib/command/runnercancel"

func init() { commands["runner-cancel"] = runnercancel.Main }
