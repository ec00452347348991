package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noPID is a pid no process has: the kernel's pids stay below
// PID_MAX_LIMIT (1<<22).
const noPID = 1 << 22

// pollUntil waits for cond, checked every 10 ms, for up to 10 s (a busy
// machine is slow, never this slow), and fails the test if it never holds.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// statOf is the state and parent of process pid, read from /proc here
// rather than through the code under test.
func statOf(pid int) (state byte, ppid int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(data, ')')
	if err != nil || i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0][0], ppid, err == nil
}

// nulList is how /proc shows a command line or an environment: each
// entry ended by a NUL.
func nulList(entries []string) string {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e + "\x00")
	}
	return b.String()
}

// started waits until process pid shows argv as its command line and,
// unless env is nil, env as its environment: the kernel sets them up a
// moment after the exec that ends exec.Cmd.Start and syscall.ForkExec,
// and until then they read empty.
func started(t *testing.T, pid int, env []string, argv ...string) {
	t.Helper()
	proc := "/proc/" + strconv.Itoa(pid) + "/"
	pollUntil(t, fmt.Sprintf("process %d to show its command line %q", pid, argv), func() bool {
		cmdline, err := os.ReadFile(proc + "cmdline")
		if err != nil || string(cmdline) != nulList(argv) {
			return false
		}
		environ, err := os.ReadFile(proc + "environ")
		return env == nil || err == nil && string(environ) == nulList(env)
	})
}

// exists reports whether process pid is in the process table, a zombie
// included: false once it has been reaped.
func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return !errors.Is(err, fs.ErrNotExist)
}

// spawn starts argv as a child of this process with syscall.ForkExec,
// which returns once it has executed, and leaves its reaping to the test
// (an exec.Cmd would reap it itself); its stdout is out, else /dev/null.
func spawn(t *testing.T, sys *syscall.SysProcAttr, out *os.File, argv ...string) int {
	t.Helper()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Fatal(err)
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if out == nil {
		out = null
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{null.Fd(), out.Fd(), os.Stderr.Fd()}, Sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// reapAll SIGKILLs those of pids still alive whose parent is this process
// or one of pids, then reaps them in order (a parent before its children:
// once it is reaped they are this subreaper's). It runs at a test's end,
// when a sweep under test may have left them.
func reapAll(pids ...int) {
	self := os.Getpid()
	for _, pid := range pids {
		if pid <= 0 {
			continue
		}
		if _, ppid, ok := statOf(pid); ok && (ppid == self || slices.Contains(pids, ppid)) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	for _, pid := range pids {
		var ws syscall.WaitStatus
		for pid > 0 {
			if _, err := syscall.Wait4(pid, &ws, 0, nil); !errors.Is(err, syscall.EINTR) {
				break
			}
		}
	}
}

// onlyChildren fails the test unless every process childrenOf lists for
// this process is its child by /proc: a sweep kills whatever childrenOf
// lists, so a childrenOf that listed others (the mutant that negates its
// comparison of the parent lists every process but these) must fail the
// test before the sweep, not be found out by it.
func onlyChildren(t *testing.T) {
	t.Helper()
	self := os.Getpid()
	for _, k := range childrenOf(self) {
		if _, ppid, ok := statOf(k.pid); ok && ppid != self {
			t.Fatalf("childrenOf(%d) lists process %d, whose parent is %d: not sweeping", self, k.pid, ppid)
		}
	}
}

// TestKillChildren: a sweep kills and reaps every child of this process,
// generation after generation. It counts a process that left the group
// pgid (setsid), with the parent it had before the sweep began (not this
// subreaper, which it is reparented to) and its command line as it was
// before the kill; it counts neither the group's members, in this
// generation or the next, nor a zombie. Not parallel: a sweep reaps every
// child of the test process.
func TestKillChildren(t *testing.T) {
	if err := becomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	var group, escaped, grouped int
	zombie := spawn(t, nil, nil, "true")
	t.Cleanup(func() { reapAll(zombie, group, escaped, grouped) })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	group = spawn(t, &syscall.SysProcAttr{Setpgid: true}, w, "sh", "-c", `setsid sleep 101 & echo "$!"
sleep 102 & echo "$!"
wait`)
	w.Close()
	out := bufio.NewReader(r)
	for _, pid := range []*int{&escaped, &grouped} {
		line, err := out.ReadString('\n')
		if *pid, err = strconv.Atoi(strings.TrimSpace(line)); err != nil {
			t.Fatalf("the group's script said %q: %v", line, err)
		}
	}
	started(t, escaped, nil, "sleep", "101") // once setsid has run
	pollUntil(t, "true to exit", func() bool { s, _, ok := statOf(zombie); return ok && s == 'Z' })
	onlyChildren(t)
	got := killChildren(group)
	var ours []Escaped
	for _, e := range got {
		if e.PID == group || e.PID == escaped || e.PID == grouped || e.PID == zombie {
			ours = append(ours, e)
		}
	}
	if want := []Escaped{{PID: escaped, PPID: group, Command: "sleep 101"}}; !slices.Equal(ours, want) {
		t.Errorf("killChildren(%d) counted %+v of ours, want %+v (group %d, grouped %d, zombie %d)", group, ours, want, group, grouped, zombie)
	}
	for _, pid := range []int{group, escaped, grouped, zombie} {
		if exists(pid) {
			t.Errorf("process %d outlived the sweep or was not reaped", pid)
		}
	}
}

// TestKillStray: KillStray kills and reaps every child of this process,
// counting each with this process as its parent and its command line, but
// a Spared run's process, which it neither kills nor reaps. Not parallel
// (see TestKillChildren).
func TestKillStray(t *testing.T) {
	self := os.Getpid()
	stray := spawn(t, nil, nil, "sleep", "103")
	kept := spawn(t, nil, nil, "sleep", "104")
	started(t, stray, nil, "sleep", "103")
	sweeping.Lock()
	spared[kept] = true
	sweeping.Unlock()
	t.Cleanup(func() {
		sweeping.Lock()
		delete(spared, kept)
		sweeping.Unlock()
		reapAll(stray, kept)
	})
	onlyChildren(t)
	got := KillStray()
	if !slices.Contains(got, Escaped{PID: stray, PPID: self, Command: "sleep 103"}) {
		t.Errorf("KillStray() = %+v, lacks the stray %d", got, stray)
	}
	if exists(stray) {
		t.Errorf("the stray %d outlived KillStray or was not reaped", stray)
	}
	if i := slices.IndexFunc(got, func(e Escaped) bool { return e.PID == kept }); i >= 0 {
		t.Errorf("KillStray counted the spared process: %+v", got[i])
	}
	if state, _, ok := statOf(kept); !ok || state == 'Z' {
		t.Errorf("the spared process %d was killed or reaped (state %q)", kept, state)
	}
}

// holder starts /bin/sh with argv (argv[0] as given), reading from a
// pipe it is never sent anything on: a process whose command line the
// test chooses, alive until the test ends.
func holder(t *testing.T, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := &exec.Cmd{Path: "/bin/sh", Args: argv}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	started(t, cmd.Process.Pid, nil, argv...)
	return cmd
}

// TestCommand: a process presents itself by its command line, arguments
// joined by spaces (those inside one kept), trimmed, clipped to 200
// bytes; by its name when the command line is blank, or empty as a
// zombie's is; "" when there is no such process.
func TestCommand(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 300)
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"arguments", []string{"sh", "-s", "a", "b c"}, "sh -s a b c"},
		{"padded", []string{"  sh", "-s", "last  "}, "sh -s last"},
		{"clipped", []string{"sh", "-s", long}, ("sh -s " + long)[:200]},
		{"blank", []string{" "}, "sh"},
	}
	for _, tt := range tests {
		if got := Command(holder(t, tt.argv...).Process.Pid); got != tt.want {
			t.Errorf("%s: Command = %q, want %q", tt.name, got, tt.want)
		}
	}
	zombie := spawn(t, nil, nil, "true")
	t.Cleanup(func() { reapAll(zombie) })
	pollUntil(t, "true to exit", func() bool { s, _, ok := statOf(zombie); return ok && s == 'Z' })
	if got := Command(zombie); got != "true" {
		t.Errorf("a zombie: Command = %q, want its name", got)
	}
	if got := Command(noPID); got != "" {
		t.Errorf("no such process: Command = %q", got)
	}
}

// startEnv starts argv (sleep 100 if none) with the environment env
// exactly, killed and reaped when the test ends.
func startEnv(t *testing.T, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	if len(argv) == 0 {
		argv = []string{"sleep", "100"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	started(t, cmd.Process.Pid, env, argv...)
	return cmd
}

// endedBy is the signal that ended cmd, once it is reaped; 0 if it exited.
func endedBy(cmd *exec.Cmd) syscall.Signal {
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// TestKillTagged: KillTagged SIGKILLs the processes whose environment
// holds the tag as a whole entry, not those where it begins an entry or
// ends one, and returns how many; a tag that is not KEY=value kills
// nothing, not even a process holding that very entry. (KillTagged("")
// is not called: were its guard lost, it would match every process.)
func TestKillTagged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tag := "TREELOOP_TEST_TAG=" + dir
	bare := "TREELOOP_TEST_BARE" + strings.ReplaceAll(dir, "/", "_")
	target := startEnv(t, []string{tag})
	longer := startEnv(t, []string{tag + "/it"})
	keyed := startEnv(t, []string{"X" + tag})
	bareHolder := startEnv(t, []string{bare})
	if n := KillTagged(bare); n != 0 {
		t.Errorf("KillTagged(%q) = %d, want 0: not KEY=value", bare, n)
	}
	if n := KillTagged("TREELOOP_TEST_TAG"); n != 0 {
		t.Errorf("KillTagged of a key alone = %d, want 0", n)
	}
	if n := KillTagged(tag); n != 1 {
		t.Errorf("KillTagged(%q) = %d, want 1", tag, n)
	}
	// What KillTagged signalled has its SIGKILL already: a SIGTERM now
	// ends only those it spared.
	for _, tt := range []struct {
		name string
		cmd  *exec.Cmd
		want syscall.Signal
	}{
		{"the tagged process", target, syscall.SIGKILL},
		{"tag as a prefix", longer, syscall.SIGTERM},
		{"tag as a suffix", keyed, syscall.SIGTERM},
		{"bare entry", bareHolder, syscall.SIGTERM},
	} {
		tt.cmd.Process.Signal(syscall.SIGTERM)
		if sig := endedBy(tt.cmd); sig != tt.want {
			t.Errorf("%s: ended by %v, want %v", tt.name, sig, tt.want)
		}
	}
}

// TestTaggedSelf: a process whose own environment names the iteration
// directory neither lists itself among its sessions' processes
// (LiveSessions) nor kills itself (KillTagged), while it does list and
// kill its tagged child. In a child test process (TestTaggedSelfHelper), whose
// environment carries the tag.
func TestTaggedSelf(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTaggedSelfHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "PROC_TAGGED_HELPER="+dir, "RUNNER_ITER_DIR="+dir+"/it")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "self-listed=false listed=1 tagged=1 child=killed\n") {
		t.Errorf("helper output lacks self-listed=false listed=1 tagged=1 child=killed:\n%s", out)
	}
}

// TestTaggedSelfHelper is TestTaggedSelf's child.
func TestTaggedSelfHelper(t *testing.T) {
	dir := os.Getenv("PROC_TAGGED_HELPER")
	if dir == "" {
		return // only meaningful as TestTaggedSelf's child
	}
	child := startEnv(t, []string{"RUNNER_ITER_DIR=" + dir + "/it"})
	live := LiveSessions(dir)
	self := slices.ContainsFunc(live, func(s string) bool { return strings.HasPrefix(s, fmt.Sprintf("pid %d: ", os.Getpid())) })
	n := KillTagged("RUNNER_ITER_DIR=" + dir + "/it")
	child.Process.Signal(syscall.SIGTERM) // ends it if KillTagged did not
	ended := "spared"
	if endedBy(child) == syscall.SIGKILL {
		ended = "killed"
	}
	fmt.Printf("self-listed=%v listed=%d tagged=%d child=%s\n", self, len(live), n, ended)
}
