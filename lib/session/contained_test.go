package session

import (
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/vocab"
)

// The word for what held a session: the sandbox's namespace or container
// before the session init's, the subreaper where the kernel refused one,
// nothing when no process started.
func TestContained(t *testing.T) {
	started := time.Unix(1, 0)
	for _, c := range []struct {
		mode string
		res  proc.Result
		want vocab.Containment
	}{
		{"", proc.Result{}, ""},
		{config.SandboxDocker, proc.Result{}, ""},
		{"", proc.Result{Started: started, Contained: true}, vocab.ContainedPIDNamespace},
		{"", proc.Result{Started: started}, vocab.ContainedSubreaper},
		{config.SandboxBwrap, proc.Result{Started: started}, vocab.ContainedBwrap},
		{config.SandboxDocker, proc.Result{Started: started}, vocab.ContainedContainer},
	} {
		if got := Contained(c.mode, c.res); got != c.want {
			t.Errorf("Contained(%q, started %v contained %v) = %q, want %q", c.mode, !c.res.Started.IsZero(), c.res.Contained, got, c.want)
		}
	}
}
