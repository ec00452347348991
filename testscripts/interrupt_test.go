package testscripts

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sigintChildEnv marks TestInterruptibleCommands' child: the suite
// started again, in a shell's background.
const sigintChildEnv = "TREELOOP_TEST_SIGINT_CHILD"

// TestInterruptibleCommands starts the suite as a shell starts a
// background job, with SIGINT ignored, and reads the disposition a command
// the suite starts has: SIGINT must not be ignored there, or testscript's
// SIGINT to a script's background command at the script's end is lost and
// the script waits for ever.
func TestInterruptibleCommands(t *testing.T) {
	if os.Getenv(sigintChildEnv) == "1" {
		out, err := exec.Command("grep", "^SigIgn:", "/proc/self/status").Output()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("ignored-at-start=%v %s", interruptIgnoredAtStart, strings.TrimSpace(string(out)))
		return
	}
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Fatalf("no /proc/self/status to read a disposition from: %v", err)
	}
	// A non-interactive shell's background job starts with SIGINT ignored.
	cmd := exec.Command("bash", "-c", `"$0" -test.run '^TestInterruptibleCommands$' -test.v & wait $!`, os.Args[0])
	cmd.Env = append(os.Environ(), sigintChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the suite started in the background: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`ignored-at-start=(\w+) SigIgn:\s*([0-9a-f]+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no disposition in the child's output:\n%s", out)
	}
	if m[1] != "true" {
		t.Fatalf("the suite started in the background did not start with SIGINT ignored (ignored-at-start=%s): the test proves nothing", m[1])
	}
	mask, err := strconv.ParseUint(m[2], 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	if mask&(1<<(2-1)) != 0 {
		t.Errorf("a command the suite starts has SIGINT ignored (SigIgn %s): testscript could not stop it", m[2])
	}
}
