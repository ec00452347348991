package testscripts

import "github.com/treeloop/treeloop/lib/command/runnerrecord"

func init() { commands["runner-record"] = runnerrecord.Main }
