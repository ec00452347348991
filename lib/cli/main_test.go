package cli

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/proc"
)

// childEnv, when set, makes the test binary a child process a test runs
// to see what a whole process does (which signals it takes) instead of
// running the tests.
const childEnv = "CLI_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "run":
		// Run a command; exit 3 when it left the process deferring signals.
		Run("tool", "", &plain{}, nil, strings.NewReader(""), io.Discard, io.Discard)
		if proc.Sheltered() {
			os.Exit(3)
		}
		os.Exit(0)
	case "stop":
		// Listen, stop, then take a SIGTERM: it must end the process as it
		// would have before; exit 0 when it did not.
		in := NotifyInterrupt()
		in.Stop()
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		// A signal a process sends itself is delivered before kill
		// returns: the wait only bounds the case where it was swallowed.
		time.Sleep(3 * time.Second)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child runs the test binary as a child in mode with env added, and
// returns how it ended.
func child(t *testing.T, mode string, env ...string) error {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, proc.DeferSignalsEnv+"=") || strings.HasPrefix(kv, childEnv+"=")
	})
	cmd.Env = append(cmd.Env, append(env, childEnv+"="+mode)...)
	out, err := cmd.CombinedOutput()
	if len(out) > 0 {
		t.Logf("child %s: %s", mode, out)
	}
	return err
}

// A command defers SIGINT and SIGTERM only in runner-step or runner-loop
// (RUNNER_DEFER_SIGNALS=1); run by hand, a signal ends it as usual.
func TestRunDefersSignalsOnlyWhenAsked(t *testing.T) {
	if err := child(t, "run"); err != nil {
		t.Errorf("run by hand: %v, want signals left alone (exit 0)", err)
	}
	var ee *exec.ExitError
	if err := child(t, "run", proc.DeferSignalsEnv+"=1"); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("%s=1: %v, want signals deferred (exit 3)", proc.DeferSignalsEnv, err)
	}
}

// After Stop, SIGTERM ends the process again.
func TestInterruptStopReleasesSignals(t *testing.T) {
	err := child(t, "stop")
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("SIGTERM after Stop: %v, want the process killed", err)
	}
	if st, ok := ee.Sys().(syscall.WaitStatus); !ok || !st.Signaled() || st.Signal() != syscall.SIGTERM {
		t.Errorf("SIGTERM after Stop: %v, want the process killed by SIGTERM", err)
	}
}
