package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitLine waits, at most ten seconds, until w holds want; it fails the
// test otherwise.
func waitLine(t *testing.T, w *waitWriter) {
	t.Helper()
	select {
	case <-w.seen:
	case <-time.After(10 * time.Second):
		t.Fatalf("no %q in the output: %q", w.want, w.String())
	}
}

// canceledOn is a context canceled once w holds its line (an
// interruption the moment the command is ready), and when the test ends.
func canceledOn(t *testing.T, w *waitWriter) context.Context {
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	go func() {
		select {
		case <-w.seen:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx
}

// TestRunGraceDefaults: a zero Grace is DefaultGrace and a zero
// InterruptGrace is Grace, never no grace at all: a command whose SIGTERM
// trap takes a moment ends with its own exit code.
func TestRunGraceDefaults(t *testing.T) {
	t.Parallel()
	log := newWaitWriter("ready")
	ctx := canceledOn(t, log)
	res := run(t, ctx, Spec{Argv: sh(`trap 'sleep 0.3; echo bye; exit 3' TERM; echo ready; while :; do sleep 0.05; done`), Log: log})
	if !res.Canceled || res.ExitCode != 3 || !strings.HasSuffix(log.String(), "bye\n") {
		t.Errorf("%+v, log %q: want the trap's exit 3 and its line", res, log.String())
	}
}

// TestRunContinuesStopped: a member of the group that stopped itself gets
// SIGCONT with the SIGTERM, so that it acts on the SIGTERM within the
// grace period rather than being killed at its end. (The group's leader
// stays, waiting for it: the group is never orphaned, which would have the
// kernel continue it.)
func TestRunContinuesStopped(t *testing.T) {
	t.Parallel()
	log := newWaitWriter("stopping ")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	script := `trap 'echo leader-term' TERM
(trap 'echo member-term; exit 0' TERM; read -r p _ </proc/self/stat; echo "stopping $p."; kill -STOP $p; echo not-stopped) &
wait; wait; echo leader-done`
	done := make(chan Result, 1)
	go func() { done <- run(t, ctx, Spec{Argv: sh(script), Log: log, Grace: 20 * time.Second}) }()
	waitLine(t, log)
	_, rest, _ := strings.Cut(log.String(), "stopping ")
	pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), "."))
	if err != nil {
		t.Fatalf("member's pid in %q: %v", log.String(), err)
	}
	if !stateIs(pid, 'T', 10*time.Second) {
		t.Fatalf("process %d never stopped", pid)
	}
	cancel()
	// Not continued, the member would be killed when the grace ends.
	if res := <-done; res.ExitCode != 0 || !strings.Contains(log.String(), "member-term\n") || !strings.HasSuffix(log.String(), "leader-done\n") {
		t.Errorf("%+v, log %q: want the member's trap run and the leader's clean exit", res, log.String())
	}
}

// stateIs reports whether process pid is in state within wait.
func stateIs(pid int, state byte, wait time.Duration) bool {
	end := time.Now().Add(wait)
	for time.Now().Before(end) {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		if s, _, ok := parseStat(data); ok && s == state {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// TestRunGroupKeepsGrace: once the group's leader has died of SIGTERM, a
// member still at work (its trap) has the rest of the grace period to
// finish, and Run returns as soon as the group is empty, not at its end.
func TestRunGroupKeepsGrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := newWaitWriter("ready")
	ctx := canceledOn(t, log)
	script := `(trap 'sleep 0.3; echo finished > done; exit 0' TERM; echo ready; while :; do sleep 0.05; done) & wait`
	start := time.Now()
	res := run(t, ctx, Spec{Argv: sh(script), Dir: dir, Log: log, Grace: time.Minute})
	if !res.Canceled || res.Signal != "terminated" {
		t.Errorf("%+v, want the leader terminated", res)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "done")); err != nil || string(data) != "finished\n" {
		t.Errorf("the member did not finish its work in the grace period: %q, %v", data, err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v: Run waited for the grace period's end, not the group's", d)
	}
}

// TestRunIdleFromLastOutput: the idle timeout counts from the last
// output, so a command that printed soon after its start and then nothing is
// stopped one timeout after that line, not more.
func TestRunIdleFromLastOutput(t *testing.T) {
	t.Parallel()
	const idle = 2 * time.Second
	log := newWaitWriter("started")
	done := make(chan Result, 1)
	go func() {
		done <- run(t, t.Context(), Spec{Argv: sh("sleep 0.2; echo started; exec sleep 100"), Log: log, IdleTimeout: idle})
	}()
	waitLine(t, log)
	seen := time.Now()
	res := <-done
	// The timer first fires one timeout after the start, the line
	// printed a moment (a, at least 0.2 s: a line printed before the
	// timer started would make any restart the same) after it: restarted
	// for what is left (a), it stops the command a timeout after the line;
	// restarted for a whole timeout and what had passed (2 timeouts less
	// a), three timeouts less 2a after it, more than two while the line
	// came in the first half of the timeout.
	if d := time.Since(seen); !res.Idle || d > 2*idle {
		t.Errorf("%+v, stopped %v after the last output, want about %v", res, d, idle)
	}
}

// TestContainedStartError: under a session init, a command that cannot
// be executed (a file without the execute bit) is a *StartError with
// exit code -1, not the init's own exit status.
func TestContainedStartError(t *testing.T) {
	if err := Containment(); err != nil {
		t.Fatalf("no PID namespaces here: %v", err)
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(t.Context(), Spec{Argv: []string{path}, KillEscaped: true})
	var se *StartError
	if !errors.As(err, &se) || !errors.Is(err, syscall.EACCES) && !strings.Contains(err.Error(), "permission denied") || res.ExitCode != -1 {
		t.Errorf("%+v, %v: want a start error and exit code -1", res, err)
	}
}

// TestRunSparedKnown: a Spared run's process is known to the sweep of
// escaped processes while it runs and forgotten once it ended; a Spared
// command that cannot start is a *StartError like any other.
func TestRunSparedKnown(t *testing.T) {
	t.Parallel()
	in, feed, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	log := newWaitWriter("\n")
	done := make(chan Result, 1)
	go func() {
		done <- run(t, t.Context(), Spec{Argv: sh("echo $$; exec cat"), Stdin: in, Log: log, Spared: true})
	}()
	waitLine(t, log)
	pid, err := strconv.Atoi(strings.TrimSpace(log.String()))
	if err != nil {
		t.Fatal(err)
	}
	isSpared := func() bool {
		sweeping.Lock()
		defer sweeping.Unlock()
		return spared[pid]
	}
	if !isSpared() {
		t.Errorf("the spared process %d is not known to the sweep", pid)
	}
	feed.Close()
	if res := <-done; res.ExitCode != 0 || isSpared() {
		t.Errorf("%+v: after the run, known to the sweep: %v", res, isSpared())
	}
	var se *StartError
	if _, err := Run(t.Context(), Spec{Argv: []string{"definitely-not-a-command"}, Spared: true}); !errors.As(err, &se) {
		t.Errorf("a spared command that cannot start: %v", err)
	}
}

// TestDeferSignals: once DeferSignals is called, SIGTERM sent to this
// process waits on Held instead of ending it, again and again, and
// ShelterChild puts a helper in a process group of its own, killed with
// this process, keeping what its SysProcAttr already said. Before, a
// helper is left as it is. (Not in parallel: the test process defers
// signals until the test ends.)
func TestDeferSignals(t *testing.T) {
	if Sheltered() || Held() != nil {
		t.Fatal("signals deferred before DeferSignals")
	}
	cmd := &exec.Cmd{}
	ShelterChild(cmd)
	if cmd.SysProcAttr != nil {
		t.Errorf("sheltered before DeferSignals: %+v", cmd.SysProcAttr)
	}
	t.Cleanup(func() {
		signal.Stop(held)
		held = nil
	})
	DeferSignals()
	first := Held()
	DeferSignals()
	if !Sheltered() || first == nil || Held() != first {
		t.Fatal("DeferSignals twice: not sheltered, or another channel")
	}
	for range 2 {
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		select {
		case s := <-Held():
			if s != syscall.SIGTERM {
				t.Errorf("held %v, want SIGTERM", s)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("SIGTERM not held")
		}
	}
	cmd = &exec.Cmd{SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	ShelterChild(cmd)
	if a := cmd.SysProcAttr; !a.Setpgid || a.Pdeathsig != syscall.SIGKILL || !a.Setsid {
		t.Errorf("sheltered helper: %+v", a)
	}
	fresh := &exec.Cmd{}
	ShelterChild(fresh)
	if a := fresh.SysProcAttr; a == nil || !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Errorf("sheltered helper without attributes: %+v", a)
	}
}

// TestDeferSignalsPending: a signal the porcelain's subshell handed on in
// PendingSignalEnv is held as though it had just come, and the variable
// is not handed on to what this process starts. (Not in parallel, as
// TestDeferSignals.)
func TestDeferSignalsPending(t *testing.T) {
	for _, c := range []struct {
		env  string
		want os.Signal
	}{{"INT", syscall.SIGINT}, {"TERM", syscall.SIGTERM}, {"", nil}, {"HUP", nil}} {
		t.Setenv(PendingSignalEnv, c.env)
		DeferSignals()
		var got os.Signal
		select {
		case got = <-Held():
		default:
		}
		signal.Stop(held)
		held = nil
		if got != c.want {
			t.Errorf("%s=%q: held %v, want %v", PendingSignalEnv, c.env, got, c.want)
		}
		if v, ok := os.LookupEnv(PendingSignalEnv); ok {
			t.Errorf("%s=%q: still set (%q)", PendingSignalEnv, c.env, v)
		}
	}
}
