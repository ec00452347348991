package testscripts

import "github.com/treeloop/treeloop/lib/command/runnercheck"

func init() { commands["runner-check"] = runnercheck.Main }
