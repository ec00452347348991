package testscripts

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPendingSignal: the porcelain's shared helpers hand on a signal that
// came about a subshell's fork and exec of a command (bash lost one passed
// on to the subshell before it reset the traps it inherited): pending puts
// it in the command's environment, RUNNER_SIGNAL_PENDING, whether the
// script had it before the fork (signal_code), got it after (on_signal
// writes signal_mark before it passes the signal on), or the subshell gets
// it while pending's own trap is set; the first one stays. None came, none
// is set. A script that sources the helpers takes one it was handed as
// though it came at its start, and hands the variable on to nothing; its
// mark goes with drop_signal_mark. (lib/proc's
// TestDeferSignalsPending: the commands' side.)
func TestPendingSignal(t *testing.T) {
	t.Parallel()
	setup, err := filepath.Abs(filepath.Join("..", "tools", "treeloop-sh-setup"))
	if err != nil {
		t.Fatal(err)
	}
	script := `me=t usage=t; . "$1"
mark_signals
echo "start=$signal_code/$signal_name/${RUNNER_SIGNAL_PENDING-unset}"
(pending; exec sh -c 'echo none=${RUNNER_SIGNAL_PENDING-unset}')
(pending; kill -INT $BASHPID; exec sh -c 'echo trapped=$RUNNER_SIGNAL_PENDING')
# A subshell the signal did not reach (as one that lost it): the mark.
(sleep 0.2; pending; exec sh -c 'echo marked=$RUNNER_SIGNAL_PENDING') &
sub=$!
kill -TERM $$
while kill -0 "$sub" 2>/dev/null; do wait "$sub"; done
echo "code=$signal_code"
mark=$signal_mark
drop_signal_mark
[ ! -e "$mark" ] && echo dropped
`
	for _, c := range []struct{ env, want string }{
		{"", "start=0//unset\nnone=unset\ntrapped=INT\nmarked=TERM\ncode=143\ndropped\n"},
		{"RUNNER_SIGNAL_PENDING=INT", "start=130/INT/unset\nnone=INT\ntrapped=INT\nmarked=INT\ncode=130\ndropped\n"},
	} {
		cmd := exec.Command("bash", "-c", script, "t", setup)
		cmd.Env = append(cmd.Environ(), "TMPDIR="+t.TempDir())
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != c.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", c.env, err, out, c.want)
		}
		if strings.Contains(string(out), "trap:") {
			t.Errorf("a trap error: %s", out)
		}
	}
}
