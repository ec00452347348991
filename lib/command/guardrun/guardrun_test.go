package guardrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/iterdir"
)

// TestFailFor: what the checks after the guard found turns a pass, a
// failure or the session's own interruption into a failure, its reasons
// at the end of guard.log; a timeout and an operator's interrupt keep
// their outcome; nothing found changes nothing.
func TestFailFor(t *testing.T) {
	for _, c := range []struct {
		outcome string
		by      string
		found   []string
		want    string
	}{
		{Pass, "", []string{"the guard changed the protected path justfile"}, Fail},
		{Fail, "", []string{"x"}, Fail},
		{Interrupted, cancel.BySession, []string{"x"}, Fail},
		{Interrupted, cancel.ByOperator, []string{"x"}, Interrupted},
		{Timeout, "", []string{"x"}, Timeout},
		{Pass, "", nil, Pass},
	} {
		dir := t.TempDir()
		rec, code := iterdir.Guard{Outcome: c.outcome}, 0
		if err := failFor(&rec, &code, c.found, cancel.Verdict{By: c.by}, dir); err != nil {
			t.Fatal(err)
		}
		if rec.Outcome != c.want || (c.want == Fail) != (code == exit.Negative) {
			t.Errorf("%s by %q with %q: %s, exit %d", c.outcome, c.by, c.found, rec.Outcome, code)
		}
		log, _ := os.ReadFile(filepath.Join(dir, iterdir.GuardLog))
		if len(c.found) > 0 && !strings.Contains(string(log), "[treeloop] "+c.found[0]+"\n") {
			t.Errorf("guard.log: %q", log)
		}
	}
}

// TestGuardConfinement: the guard's seal counts on the sandbox only when
// the guard runs in it ([sandbox] guard, under bwrap or docker).
func TestGuardConfinement(t *testing.T) {
	sb := config.Default().Sandbox
	if c := guardConfinement(sb, "/r"); c.Sandbox.Confined() {
		t.Errorf("mode none: %+v", c)
	}
	sb.Mode = config.SandboxBwrap
	if c := guardConfinement(sb, "/r"); !c.Sandbox.Confined() || c.Root != "/r" || len(c.Writable) != 0 {
		t.Errorf("bwrap: %+v", c)
	}
	sb.Guard = false
	if c := guardConfinement(sb, "/r"); c.Sandbox.Confined() {
		t.Errorf("guard = false: %+v", c)
	}
}
