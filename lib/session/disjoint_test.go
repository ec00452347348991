package session

import (
	"testing"

	"github.com/treeloop/treeloop/lib/policy"
)

// TestDisjoint: the logs are checked beside the protected paths only when
// no path of the scope is the run's iteration directory, holds it or lies
// under it.
func TestDisjoint(t *testing.T) {
	const logs = ".runner/iterations/r1"
	for _, c := range []struct {
		scope []string
		want  bool
	}{
		{policy.Scope([]string{"justfile", "ci"}), true},
		{policy.Scope([]string{".runner/iterations-old"}), true},
		{nil, false}, // the whole work tree
		{policy.Scope([]string{".runner"}), false},
		{policy.Scope([]string{".runner/iterations"}), false},
		{policy.Scope([]string{logs}), false},
		{policy.Scope([]string{logs + "/0001/agent.json"}), false},
		{policy.Scope([]string{".runner/iterations/r*/x"}), false},
	} {
		if got := disjoint(c.scope, logs); got != c.want {
			t.Errorf("disjoint(%q) = %v, want %v", c.scope, got, c.want)
		}
	}
}
