package session

import (
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/proc"
	"github.com/treeloop/treeloop/lib/vocab"
)

// The word for what held a session: the sandbox's namespace or container
// before the session init's, the subreaper where the kernel refused one,
// nothing when no process started.
func TestContained(t *testing.T) {
	for _, c := range []struct {
		mode string
		res  proc.Result
		want vocab.Containment
	}{
		{"", proc.Result{}, ""},
		{config.SandboxDocker, proc.Result{}, ""},
		{"", proc.Result{Started: true, Contained: true}, vocab.ContainedPIDNamespace},
		{"", proc.Result{Started: true}, vocab.ContainedSubreaper},
		{config.SandboxBwrap, proc.Result{Started: true}, vocab.ContainedBwrap},
		{config.SandboxDocker, proc.Result{Started: true}, vocab.ContainedContainer},
	} {
		if got := Contained(c.mode, c.res); got != c.want {
			t.Errorf("Contained(%q, started %v contained %v) = %q, want %q", c.mode, c.res.Started, c.res.Contained, got, c.want)
		}
	}
}
