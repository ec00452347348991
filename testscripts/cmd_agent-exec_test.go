package testscripts

import "github.com/treeloop/treeloop/lib/command/agentexec"

func init() { commands["agent-exec"] = agentexec.Main }
