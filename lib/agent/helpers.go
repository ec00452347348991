package agent

import (
	"strings"

	"github.com/treeloop/treeloop/lib/proc"
)

// SplitEscaped separates the processes left running after a session of
// backend into those its CLI started for itself (a known helper,
// Spec.Helpers, or a
// process a helper started) and the others, the agent's. The command
// lines are the processes' own: the split only decides how they are
// reported; every one of them was killed.
func SplitEscaped(backend string, procs []proc.Escaped) (agents, helpers []proc.Escaped) {
	isHelper := map[int]bool{}
	spec, _ := Lookup(backend)
	for _, p := range procs {
		for _, match := range spec.Helpers {
			if match(p.Command) {
				isHelper[p.PID] = true
			}
		}
	}
	// A helper's descendants are the helper's (parents come first or in
	// the same round: iterate until nothing changes).
	for changed := true; changed; {
		changed = false
		for _, p := range procs {
			if !isHelper[p.PID] && isHelper[p.PPID] {
				isHelper[p.PID], changed = true, true
			}
		}
	}
	for _, p := range procs {
		if isHelper[p.PID] {
			helpers = append(helpers, p)
		} else {
			agents = append(agents, p)
		}
	}
	return agents, helpers
}

// Commands are the command lines of procs, each cut to n bytes.
func Commands(procs []proc.Escaped, n int) []string {
	out := make([]string, len(procs))
	for i, p := range procs {
		c := strings.Join(strings.Fields(p.Command), " ")
		if len(c) > n {
			c = c[:n] + "…"
		}
		out[i] = c
	}
	return out
}
