package agentexec

import (
	"fmt"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/vocab"
)

// reportedRow is how many iterations right before iteration iter of the
// run whose iterations are in runDir ended on node in a failure their
// session reported about itself (agent.Reported): the row a new reported
// failure joins. An iteration interrupted before its session gave a
// verdict is passed over; any other iteration, of this node or another,
// ends the row. The logs are the runner's own (the seal holds them during
// a session), read before the session starts.
func reportedRow(runDir string, iter int, node string) int {
	row := 0
	for n := iter - 1; n >= 1; n-- {
		var m iterdir.Meta
		if iterdir.Read(filepath.Join(runDir, layout.IterName(n)), iterdir.MetaFile, &m) != nil || m.NodeID != node {
			break
		}
		switch {
		case m.Status == string(vocab.StatusInterrupted):
			continue
		case m.Agent != nil && agent.Reported(m.Agent.Backend, m.Agent.Class):
			row++
			continue
		}
		break
	}
	return row
}

// overReported is the agent error of a session of backend that ended in
// class, a failure it reported about itself, when row such failures came
// right before it on node and [agent] max_reported_failures (max) are
// free: "" when the session's failure is not reported or still free. A
// session's word that its provider limits or fails it costs no attempt
// only so many times in a row, else an agent could report a rate limit
// for ever and never spend an attempt on a node it cannot do.
func overReported(backend, class string, row, max int, node string) string {
	if !agent.Reported(backend, class) || row < max {
		return ""
	}
	return fmt.Sprintf("the session reported %s, the %s failure in a row it reported about itself on node '%s' ([agent] max_reported_failures = %d cost no attempt): this one costs an attempt",
		class, ordinal(row+1), node, max)
}

// ordinal is n as "1st", "2nd", "3rd", "4th", … "11th", "21st".
func ordinal(n int) string {
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100 >= 11 && n%100 <= 13 {
		suffix = "th"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
