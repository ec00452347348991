package testscripts

import (
	"github.com/treeloop/treeloop/lib/command/evalreport"
	"github.com/treeloop/treeloop/lib/command/evalrun"
)

func init() {
	commands["eval-run"] = evalrun.Main
	commands["eval-report"] = evalreport.Main
}
