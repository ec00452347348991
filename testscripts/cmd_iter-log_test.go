package testscripts

import "github.com/treeloop/treeloop/lib/command/iterlog"

func init() { commands["iter-log"] = iterlog.Main }
