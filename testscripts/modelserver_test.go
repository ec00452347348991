package testscripts

import "github.com/treeloop/treeloop/testscripts/modelserver"

// modelserver is a test helper, not a treeloop command: the scripted model
// behind the real agent CLIs.
func init() { helpers["modelserver"] = modelserver.Main }
