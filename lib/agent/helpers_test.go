package agent

import (
	"reflect"
	"testing"

	"github.com/treeloop/treeloop/lib/proc"
)

// Codex's shell snapshot and what it started are the CLI's; anything
// else, or the same under another backend, is the agent's.
func TestSplitEscaped(t *testing.T) {
	snapshot := proc.Escaped{PID: 10, PPID: 5, Command: "/bin/bash -lc if [ -z \"${BASH_ENV-}\" ]; then :; fi\necho '# Snapshot file'"}
	child := proc.Escaped{PID: 11, PPID: 10, Command: "bash"}
	agents := proc.Escaped{PID: 12, PPID: 1, Command: "sleep 300"}
	grandchild := proc.Escaped{PID: 13, PPID: 11, Command: "cat"}
	procs := []proc.Escaped{grandchild, agents, child, snapshot}
	left, helpers := SplitEscaped("codex", procs)
	if !reflect.DeepEqual(left, []proc.Escaped{agents}) || len(helpers) != 3 {
		t.Fatalf("codex: left %+v helpers %+v", left, helpers)
	}
	left, helpers = SplitEscaped("claude", procs)
	if len(left) != 4 || len(helpers) != 0 {
		t.Fatalf("claude: left %+v helpers %+v", left, helpers)
	}
	if got := Commands([]proc.Escaped{{Command: "a\n  b   c"}, {Command: "0123456789"}}, 5); !reflect.DeepEqual(got, []string{"a b c", "01234…"}) {
		t.Errorf("Commands: %q", got)
	}
}
