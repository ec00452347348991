package guard

import (
	"io"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/iterdir"
)

// TestCheckBaseline runs real guards the way runner-check --guard does: a
// green one gives no problem, a red one and one that cannot start each
// give one that says what happened.
func TestCheckBaseline(t *testing.T) {
	env := &cli.Env{Name: "runner-check", Stdout: io.Discard, Stderr: io.Discard, Dir: t.TempDir()}
	for _, c := range []struct {
		guard []string
		want  string
	}{
		{[]string{"true"}, ""},
		{[]string{"sh", "-c", "echo broken; exit 3"}, "guard: the repository does not start green (guard failed (exit 3))"},
		{[]string{"no-such-guard-tool"}, `guard: the guard could not start: start "no-such-guard-tool"`},
	} {
		cfg := config.Default()
		cfg.Guard.Command = c.guard
		ps := CheckBaseline(env, cfg)
		switch {
		case c.want == "" && len(ps) != 0:
			t.Errorf("guard %q: problems %q, want none", c.guard, ps)
		case c.want != "" && (len(ps) != 1 || !strings.HasPrefix(ps[0], c.want)):
			t.Errorf("guard %q: problems %q, want one starting %q", c.guard, ps, c.want)
		}
	}
}

// TestRedStart: a red baseline is a note naming its log; a green one,
// and one whose guard could not run, none.
func TestRedStart(t *testing.T) {
	if n := RedStart("r", iterdir.Guard{Outcome: Fail, Message: "guard failed (exit 1)"}); !strings.Contains(n, "its baseline at runner-start: guard failed (exit 1); output in .runner/iterations/r/baseline.log") {
		t.Errorf("red: %q", n)
	}
	for _, o := range []string{Pass, Error} {
		if n := RedStart("r", iterdir.Guard{Outcome: o, Message: "x"}); n != "" {
			t.Errorf("%s: %q", o, n)
		}
	}
}
