package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/proc"
)

// interrupted waits, at most ten seconds, for in to be done.
func interrupted(t *testing.T, in *Interrupt) {
	t.Helper()
	select {
	case <-in.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not interrupted")
	}
}

// TestInterruptSignals: SIGTERM and SIGINT each interrupt, with the exit
// code and the cause the iteration is recorded with (143 and SIGTERM, 130
// and SIGINT) and the time it came; the first interruption is the one
// recorded. Nothing interrupted reads 0, "" and the zero time. (The
// signals go to the test process, which NotifyInterrupt keeps alive.)
func TestInterruptSignals(t *testing.T) {
	for _, c := range []struct {
		sig   syscall.Signal
		code  int
		cause string
	}{{syscall.SIGTERM, exit.SIGTERM, "SIGTERM"}, {syscall.SIGINT, exit.SIGINT, "SIGINT"}} {
		in := NotifyInterrupt()
		if in.Err() != nil || in.Code() != 0 || in.Cause() != "" || !in.At().IsZero() {
			t.Fatalf("before any signal: err %v, code %d, cause %q, at %v", in.Err(), in.Code(), in.Cause(), in.At())
		}
		before := time.Now()
		syscall.Kill(os.Getpid(), c.sig)
		interrupted(t, in)
		if in.Code() != c.code || in.Cause() != c.cause || in.At().Before(before) || in.At().After(time.Now()) {
			t.Errorf("%v: code %d, cause %q, at %v (sent at %v)", c.sig, in.Code(), in.Cause(), in.At(), before)
		}
		in.fire(exit.SIGINT, CauseCancelFile) // a second interruption changes nothing
		if in.Code() != c.code || in.Cause() != c.cause {
			t.Errorf("%v, then the cancel file: code %d, cause %q", c.sig, in.Code(), in.Cause())
		}
		in.Stop()
	}
}

// TestWatchCancelFile: the cancel file interrupts (130, cancel-file)
// whether it is there already, when WatchCancelFile returns done, or
// created later; a directory that does not exist is an error.
func TestWatchCancelFile(t *testing.T) {
	dir := t.TempDir()
	cancelFile := filepath.Join(dir, "cancel")
	in := NotifyInterrupt()
	defer in.Stop()
	if err := in.WatchCancelFile(cancelFile); err != nil || in.Err() != nil {
		t.Fatalf("WatchCancelFile = %v, interrupted %v", err, in.Err())
	}
	if err := os.WriteFile(cancelFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	interrupted(t, in)
	if in.Code() != exit.SIGINT || in.Cause() != CauseCancelFile {
		t.Errorf("created later: code %d, cause %q", in.Code(), in.Cause())
	}

	there := NotifyInterrupt()
	defer there.Stop()
	if err := there.WatchCancelFile(cancelFile); err != nil || there.Err() == nil || there.Cause() != CauseCancelFile {
		t.Errorf("there already: %v, interrupted %v, cause %q", err, there.Err(), there.Cause())
	}

	missing := NotifyInterrupt()
	defer missing.Stop()
	if err := missing.WatchCancelFile(filepath.Join(dir, "no-such-dir", "cancel")); err == nil {
		t.Error("a cancel file in a directory that does not exist: no error")
	}
}

// TestInterruptTakesHeldSignal: in a command that defers signals
// (RUNNER_DEFER_SIGNALS=1, as runner-step runs its commands), a SIGTERM
// that came before NotifyInterrupt is taken by it at once: the Interrupt
// is done when it returns, and no session starts. Last in this file: the
// test process defers signals from here on, which the tests after it do
// not mind.
func TestInterruptTakesHeldSignal(t *testing.T) {
	t.Setenv(proc.DeferSignalsEnv, "1")
	deferSignals()
	if !proc.Sheltered() {
		t.Fatalf("%s=1: signals not deferred", proc.DeferSignalsEnv)
	}
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	deadline := time.Now().Add(10 * time.Second)
	for len(proc.Held()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // the signal on its way to the held channel
	}
	in := NotifyInterrupt()
	defer in.Stop()
	if in.Err() == nil || in.Code() != exit.SIGTERM || in.Cause() != "SIGTERM" {
		t.Errorf("a held SIGTERM: err %v, code %d, cause %q", in.Err(), in.Code(), in.Cause())
	}
}
