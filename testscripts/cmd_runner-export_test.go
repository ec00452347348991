package testscripts

import "github.com/treeloop/treeloop/lib/command/runnerexport"

func init() { commands["runner-export"] = runnerexport.Main }
