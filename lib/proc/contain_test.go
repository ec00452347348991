package proc

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestContainedStatus: a session's command runs under its own init in a
// PID namespace (its parent is the init, PID 1), and its exit code
// or the signal that ended it comes through as if it ran plainly.
func TestContainedStatus(t *testing.T) {
	if err := Containment(); err != nil {
		t.Fatalf("no PID namespaces here: %v", err)
	}
	var log strings.Builder
	res := run(t, t.Context(), Spec{Argv: sh(`echo "$PPID"; exit 7`), Log: &log, KillEscaped: true})
	if !res.Contained || res.ExitCode != 7 || res.Signal != "" || log.String() != "1\n" {
		t.Errorf("exit: %+v, output %q", res, log.String())
	}
	res = run(t, t.Context(), Spec{Argv: sh(`kill -TERM $$`), KillEscaped: true})
	if !res.Contained || res.ExitCode != -1 || res.Signal != "terminated" {
		t.Errorf("signal: %+v", res)
	}
	// The init cannot be killed from inside: the command's kill -9 1 is
	// dropped, and it exits on its own.
	res = run(t, t.Context(), Spec{Argv: sh(`kill -9 1; kill -9 $PPID; exit 3`), KillEscaped: true})
	if res.ExitCode != 3 {
		t.Errorf("kill the init: %+v", res)
	}
	if _, err := Run(t.Context(), Spec{Argv: []string{"definitely-not-a-command"}, KillEscaped: true}); err == nil {
		t.Error("a missing command started")
	}
}

// TestLiveSessions: a session's init, while it lives, is found by its
// repository and named; killed by its tag, its namespace dies with it.
func TestLiveSessions(t *testing.T) {
	if err := Containment(); err != nil {
		t.Fatalf("no PID namespaces here: %v", err)
	}
	dir := t.TempDir()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(t.Context(), Spec{Argv: sh(`sleep 100 & read -r p _ </proc/self/stat; echo $p; exec sleep 100`), Dir: dir,
			Env: append(os.Environ(), "RUNNER_ITER_DIR="+dir+"/it"), Stdout: pw, KillEscaped: true})
		done <- res
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	shPid, _ := strconv.Atoi(strings.TrimSpace(line))
	live := LiveSessions(dir)
	if len(live) != 1 || !strings.Contains(live[0], "session of "+dir+"/it") || !strings.Contains(live[0], "sleep 100") {
		t.Fatalf("LiveSessions = %q", live)
	}
	if got := LiveSessions(dir + "-other"); len(got) != 0 {
		t.Errorf("another repository's sessions: %q", got)
	}
	if n := KillSessions(dir + "/it"); n != 1 {
		t.Errorf("KillSessions = %d", n)
	}
	res := <-done
	if res.Signal != "killed" {
		t.Errorf("after KillSessions: %+v", res)
	}
	if !gone(shPid, 3*time.Second) {
		syscall.Kill(shPid, syscall.SIGKILL)
		t.Errorf("the session's command %d outlived its init", shPid)
	}
}

// TestInitOutsideNamespace: this program started under the init's name
// outside a PID namespace (not PID 1) runs the command and signals only
// it: a SIGTERM it gets reaches no other process.
func TestInitOutsideNamespace(t *testing.T) {
	sentinel := exec.Command("sleep", "100")
	if err := sentinel.Start(); err != nil {
		t.Fatal(err)
	}
	defer sentinel.Process.Kill()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The command says ready once started, after the init's handlers.
	fake := &exec.Cmd{Path: exe, Args: []string{InitName, t.TempDir(), "--", "/bin/sh", "sh", "-c", "echo ready; exec sleep 100"}}
	out, err := fake.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the stand-in init's command: %q, %v", line, err)
	}
	fake.Process.Signal(syscall.SIGTERM)
	err = fake.Wait()
	if st, ok := fake.ProcessState.Sys().(syscall.WaitStatus); !ok || st.ExitStatus() != 128+int(syscall.SIGTERM) {
		t.Errorf("the stand-in init: %v, %v", err, fake.ProcessState)
	}
	if err := sentinel.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("a process outside was signalled: %v", err)
	}
}

// TestContainmentHint: each kernel setting that keeps a user that is not
// root from a PID namespace is named; root, and settings that allow it, or
// that are missing, give no hint.
func TestContainmentHint(t *testing.T) {
	settings := func(kv map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			v, ok := kv[p]
			if !ok {
				return nil, os.ErrNotExist
			}
			return []byte(v + "\n"), nil
		}
	}
	const (
		clone    = "/proc/sys/kernel/unprivileged_userns_clone"
		max      = "/proc/sys/user/max_user_namespaces"
		apparmor = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
	)
	allowed := map[string]string{clone: "1", max: "63704", apparmor: "0"}
	tests := []struct {
		name string
		uid  int
		kv   map[string]string
		want string
	}{
		{"allowed", 1000, allowed, ""},
		{"no settings", 1000, map[string]string{}, ""},
		{"clone off", 1000, map[string]string{clone: "0", max: "63704"}, "kernel.unprivileged_userns_clone = 0"},
		{"no namespaces", 1000, map[string]string{max: "0"}, "user.max_user_namespaces = 0"},
		{"apparmor", 1000, map[string]string{clone: "1", max: "63704", apparmor: "1"}, "kernel.apparmor_restrict_unprivileged_userns = 1"},
		{"root", 0, map[string]string{apparmor: "1", max: "0"}, ""},
	}
	for _, tt := range tests {
		if got := containmentHint(tt.uid, settings(tt.kv)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
