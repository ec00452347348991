package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
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
	// Stopped by the test should KillSessions miss it, rather than
	// waiting for its sleep.
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(ctx, Spec{Argv: sh(`sleep 100 & read -r p _ </proc/self/stat; echo $p; exec sleep 100`), Dir: dir,
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
		stop()
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
// root from a PID namespace is named, the first in the order checked when
// several do; root, and settings that allow it, hold another value or are
// missing, give no hint.
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
		{"all off: the first named", 1000, map[string]string{clone: "0", max: "0", apparmor: "1"}, "kernel.unprivileged_userns_clone = 0"},
		{"two off: the first named", 1000, map[string]string{max: "0", apparmor: "1"}, "user.max_user_namespaces = 0"},
		{"other values", 1000, map[string]string{clone: "2", max: "00", apparmor: "2"}, ""},
	}
	for _, tt := range tests {
		if got := containmentHint(tt.uid, settings(tt.kv)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestContainmentHintHere: where sessions do run in a PID namespace, the
// kernel's settings give no hint that they would not.
func TestContainmentHintHere(t *testing.T) {
	if err := Containment(); err != nil {
		t.Fatalf("no PID namespaces here: %v", err)
	}
	if hint := ContainmentHint(); hint != "" {
		t.Errorf("ContainmentHint() = %q, though sessions are contained", hint)
	}
}

// TestContainAttr: a session's init is started in a new PID namespace and
// a process group of its own, killed with its parent; in a user namespace
// mapping the caller's uid and gid to themselves only when not root.
func TestContainAttr(t *testing.T) {
	a := containAttr()
	if a.Cloneflags&syscall.CLONE_NEWPID == 0 || !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Errorf("containAttr() = %+v: no PID namespace, group or Pdeathsig", a)
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		if a.Cloneflags&syscall.CLONE_NEWUSER != 0 || a.UidMappings != nil || a.GidMappings != nil {
			t.Errorf("as root, containAttr() = %+v: a user namespace", a)
		}
		return
	}
	wantUID := []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	wantGID := []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	if a.Cloneflags&syscall.CLONE_NEWUSER == 0 || !slices.Equal(a.UidMappings, wantUID) || !slices.Equal(a.GidMappings, wantGID) || a.GidMappingsEnableSetgroups {
		t.Errorf("as uid %d, containAttr() = %+v: no user namespace mapping %d and %d to themselves", uid, a, uid, gid)
	}
}

// TestInitStatus: the init's report is read line by line: the exit code
// (-1 without one), the signal, the count of escaped processes and those
// named, each with a command that may hold spaces or be empty; an escaped
// line without its three fields, and a line of no known kind, are
// skipped; a start error is kept whole.
func TestInitStatus(t *testing.T) {
	tests := []struct {
		name, text string
		want       initReport
	}{
		{"nothing", "", initReport{code: -1}},
		{"exit", "exit 7\n", initReport{code: 7}},
		{"exit 0", "exit 0\n", initReport{code: 0}},
		{"signal", "signal 15\n", initReport{code: -1, sig: syscall.SIGTERM}},
		{"escaped", "escaped-count 70\nescaped 12 1 sleep 100 --x\nescaped 13 12 \nexit 0\n",
			initReport{count: 70, escaped: []Escaped{{PID: 12, PPID: 1, Command: "sleep 100 --x"}, {PID: 13, PPID: 12}}}},
		{"malformed escaped", "escaped 12 1\nescaped 12\nescaped\nexit 3\n", initReport{code: 3}},
		{"unknown", "hello 4\nexit 2\n", initReport{code: 2}},
		{"start", "start exec format error: a b\n", initReport{code: -1, startErr: "exec format error: a b"}},
	}
	for _, tt := range tests {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString(tt.text)
		w.Close()
		got := initStatus(r)
		r.Close()
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: initStatus = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestLiveSessionsTagged: with no session init alive, LiveSessions lists
// the processes whose RUNNER_ITER_DIR is the root or lies under it, each
// with its command line, whether the root ends in a slash or not; not
// those of a sibling directory whose name begins with the root's.
func TestLiveSessionsTagged(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	tagged := func(dir, arg string) int {
		return startEnv(t, []string{"RUNNER_ITER_DIR=" + dir}, "sleep", arg).Process.Pid
	}
	under := fmt.Sprintf("pid %d: sleep 101 (session of %s/it)", tagged(root+"/it", "101"), root)
	at := fmt.Sprintf("pid %d: sleep 102 (session of %s)", tagged(root, "102"), root)
	tagged(root+"-other", "103")
	tagged(root+"-other/it", "104")
	for _, r := range []string{root, root + "/"} {
		got := LiveSessions(r)
		slices.Sort(got)
		if want := []string{under, at}; !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("LiveSessions(%q) = %q, want %q", r, got, want)
		}
	}
	if got := LiveSessions(root + "/it"); !slices.Equal(got, []string{under}) {
		t.Errorf("LiveSessions of the iteration = %q, want %q", got, under)
	}
}

// TestIterTag: iterTag reads RUNNER_ITER_DIR from a process's
// environment, empty or not; a process without it (a near name does not
// count) or gone has none.
func TestIterTag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  []string
		dir  string
		ok   bool
	}{
		{"set", []string{"A=1", "RUNNER_ITER_DIR=/x/it", "B=2"}, "/x/it", true},
		{"empty", []string{"RUNNER_ITER_DIR="}, "", true},
		{"near names", []string{"RUNNER_ITER_DIRS=/y", "XRUNNER_ITER_DIR=/z", "RUNNER_ITER_DIR"}, "", false},
		{"no environment", []string{}, "", false},
	}
	for _, tt := range tests {
		cmd := startEnv(t, tt.env)
		if dir, ok := iterTag(cmd.Process.Pid); dir != tt.dir || ok != tt.ok {
			t.Errorf("%s: iterTag = %q, %v; want %q, %v", tt.name, dir, ok, tt.dir, tt.ok)
		}
	}
	if dir, ok := iterTag(noPID); dir != "" || ok {
		t.Errorf("no such process: iterTag = %q, %v", dir, ok)
	}
}

// TestLiveSessionsOneWord: a session whose command is a single word (its
// init's argv has five entries, the fewest) is listed by its init alone,
// by that word, though its processes carry the iteration directory in
// their environment; KillSessions spares it for any tag but its own
// exactly (the repository, a prefix, a trailing slash), and it ends on
// its own.
func TestLiveSessionsOneWord(t *testing.T) {
	if err := Containment(); err != nil {
		t.Fatalf("no PID namespaces here: %v", err)
	}
	dir := t.TempDir()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(t.Context(), Spec{Argv: []string{"cat"}, Dir: dir, Env: append(os.Environ(), "RUNNER_ITER_DIR="+dir+"/it"),
			Stdin: inR, Stdout: outW, KillEscaped: true})
		done <- res
	}()
	ended := false
	t.Cleanup(func() {
		inW.Close()
		if !ended {
			<-done // t.Context, done by now, has stopped the run
		}
		closeFiles(inR, outR, outW)
	})
	inW.WriteString("ready\n")
	if line, err := bufio.NewReader(outR).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the session's cat said %q: %v", line, err)
	}
	want := regexp.MustCompile(`^pid [0-9]+: cat \(session of ` + regexp.QuoteMeta(dir+"/it") + `\)$`)
	if live := LiveSessions(dir); len(live) != 1 || !want.MatchString(live[0]) {
		t.Errorf("LiveSessions = %q, want the session of %s/it by its command cat", live, dir)
	}
	for _, tag := range []string{dir, dir + "/i", dir + "/it/", "/it"} {
		if n := KillSessions(tag); n != 0 {
			t.Errorf("KillSessions(%q) = %d, want 0", tag, n)
		}
	}
	inW.Close()
	res := <-done
	ended = true
	if !res.Contained || res.ExitCode != 0 || res.Signal != "" {
		t.Errorf("the session ended %+v, want on its own with 0", res)
	}
}

// TestKillSessionsOnlyInits: KillSessions kills session inits alone, not
// a process that merely has the tag as its first argument (a script of
// that name, a pager on it).
func TestKillSessionsOnlyInits(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "it")
	if err := os.WriteFile(script, []byte("read -r line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := holder(t, "sh", script)
	if n := KillSessions(script); n != 0 {
		t.Errorf("KillSessions(%q) = %d, want 0", script, n)
	}
	cmd.Process.Signal(syscall.SIGTERM) // KillSessions' SIGKILL, if sent, came first
	if sig := endedBy(cmd); sig != syscall.SIGTERM {
		t.Errorf("sh %s ended by %v, want SIGTERM", script, sig)
	}
}

// BenchmarkLiveSessions: step-begin's look for a session still alive, over
// every process of this machine, none of them a session of the root.
func BenchmarkLiveSessions(b *testing.B) {
	root := b.TempDir()
	for b.Loop() {
		if live := LiveSessions(root); live != nil {
			b.Fatalf("live: %q", live)
		}
	}
}
