package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// slow bounds the wall time of a run that should stop early; generous so
// that a loaded machine does not fail the tests.
const slow = 8 * time.Second

func sh(script string) []string { return []string{"sh", "-c", script} }

// syncBuffer is a bytes.Buffer safe to read while Run writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func run(t *testing.T, ctx context.Context, s Spec) Result {
	t.Helper()
	res, err := Run(ctx, s)
	if err != nil {
		t.Fatalf("Run(%q): %v", s.Argv, err)
	}
	return res
}

func TestRunExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		script string
		code   int
		signal string
		status int
	}{
		{"exit 0", 0, "", 0},
		{"exit 3", 3, "", 3},
		{"exit 255", 255, "", 255},
		{"kill -TERM $$", -1, "terminated", 143},
		{"kill -KILL $$", -1, "killed", 137},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			t.Parallel()
			res := run(t, t.Context(), Spec{Argv: sh(tt.script)})
			if res.ExitCode != tt.code || res.Signal != tt.signal {
				t.Errorf("exit %d signal %q, want %d %q", res.ExitCode, res.Signal, tt.code, tt.signal)
			}
			if res.Status() != tt.status {
				t.Errorf("Status() = %d, want %d", res.Status(), tt.status)
			}
			if res.TimedOut || res.Idle || res.Canceled {
				t.Errorf("stop reason set on a plain exit: %+v", res)
			}
		})
	}
}

// TestRunLogOrder checks that stdout and stderr reach the log, and Tee,
// in the order the process wrote them.
func TestRunLogOrder(t *testing.T) {
	t.Parallel()
	var log, tee syncBuffer
	script := "for i in 1 2 3 4 5 6 7 8 9 10; do echo out$i; echo err$i >&2; done"
	res := run(t, t.Context(), Spec{Argv: sh(script), Log: &log, Tee: &tee})
	var want strings.Builder
	for i := 1; i <= 10; i++ {
		want.WriteString("out" + strconv.Itoa(i) + "\nerr" + strconv.Itoa(i) + "\n")
	}
	if log.String() != want.String() {
		t.Errorf("log = %q, want %q", log.String(), want.String())
	}
	if tee.String() != want.String() {
		t.Errorf("tee = %q, want %q", tee.String(), want.String())
	}
	if res.OutputBytes != int64(want.Len()) {
		t.Errorf("OutputBytes = %d, want %d", res.OutputBytes, want.Len())
	}
}

// TestRunStdoutSink checks that Stdout receives stdout alone while the log
// still interleaves both streams in arrival order.
func TestRunStdoutSink(t *testing.T) {
	t.Parallel()
	var log, stdout, tee syncBuffer
	script := "echo a; sleep 0.3; echo b >&2; sleep 0.3; echo c; sleep 0.3; echo d >&2"
	run(t, t.Context(), Spec{Argv: sh(script), Log: &log, Stdout: &stdout, Tee: &tee})
	// Two pipes: the order across them is not guaranteed under load, the
	// content is, and the log and the tee see the same order.
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	slices.Sort(lines)
	if got, want := strings.Join(lines, ","), "a,b,c,d"; got != want {
		t.Errorf("log lines = %q, want %q", got, want)
	}
	if tee.String() != log.String() {
		t.Errorf("tee = %q, log = %q: want the same", tee.String(), log.String())
	}
	if got, want := stdout.String(), "a\nc\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestRunStdin(t *testing.T) {
	t.Parallel()
	t.Run("reader", func(t *testing.T) {
		t.Parallel()
		var log syncBuffer
		run(t, t.Context(), Spec{Argv: []string{"cat"}, Stdin: strings.NewReader("prompt\n"), Log: &log})
		if log.String() != "prompt\n" {
			t.Errorf("log = %q, want the input", log.String())
		}
	})
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "in")
		os.WriteFile(path, []byte("from file\n"), 0o644)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var log syncBuffer
		run(t, t.Context(), Spec{Argv: []string{"cat"}, Stdin: f, Log: &log})
		if log.String() != "from file\n" {
			t.Errorf("log = %q, want the file", log.String())
		}
	})
	t.Run("nil", func(t *testing.T) {
		t.Parallel()
		var log syncBuffer
		res := run(t, t.Context(), Spec{Argv: []string{"cat"}, Log: &log, Deadline: time.Now().Add(slow)})
		if res.TimedOut || log.String() != "" {
			t.Errorf("cat on nil stdin: %+v, log %q; want an immediate end of input", res, log.String())
		}
	})
	t.Run("unread", func(t *testing.T) {
		t.Parallel()
		// More input than a pipe holds, never read: the run still ends.
		in := bytes.NewReader(make([]byte, 4<<20))
		start := time.Now()
		res := run(t, t.Context(), Spec{Argv: sh("exit 0"), Stdin: in})
		if res.ExitCode != 0 || time.Since(start) > slow {
			t.Errorf("%+v after %v", res, time.Since(start))
		}
	})
}

func TestRunEnvDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var log syncBuffer
	run(t, t.Context(), Spec{
		Argv: sh(`echo "$TREELOOP_TEST"; pwd -P`),
		Env:  []string{"TREELOOP_TEST=hello", "PATH=" + os.Getenv("PATH")},
		Dir:  dir,
		Log:  &log,
	})
	real, _ := filepath.EvalSymlinks(dir)
	if want := "hello\n" + real + "\n"; log.String() != want {
		t.Errorf("log = %q, want %q", log.String(), want)
	}

	var inherited syncBuffer
	run(t, t.Context(), Spec{Argv: sh(`echo "$PATH"`), Log: &inherited})
	if inherited.String() != os.Getenv("PATH")+"\n" {
		t.Errorf("nil Env: log = %q, want the inherited variable", inherited.String())
	}
}

func TestRunDeadline(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := run(t, t.Context(), Spec{Argv: []string{"sleep", "100"}, Deadline: time.Now().Add(300 * time.Millisecond)})
	if !res.TimedOut || res.Idle || res.Canceled {
		t.Errorf("reasons %+v, want TimedOut only", res)
	}
	if res.ExitCode != -1 || res.Signal != "terminated" {
		t.Errorf("exit %d signal %q, want -1 terminated", res.ExitCode, res.Signal)
	}
	if d := time.Since(start); d > slow {
		t.Errorf("took %v", d)
	}
}

func TestRunDeadlinePassed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res := run(t, t.Context(), Spec{Argv: sh("touch ran"), Dir: dir, Deadline: time.Now().Add(-time.Second)})
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("%+v, want TimedOut and -1", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Error("the command ran although its deadline had passed")
	}
}

// TestRunGrace checks that a process ignoring SIGTERM is killed once the
// grace period ends.
func TestRunGrace(t *testing.T) {
	t.Parallel()
	start := time.Now()
	res := run(t, t.Context(), Spec{
		Argv:     sh(`trap "" TERM; sleep 100`),
		Deadline: time.Now().Add(200 * time.Millisecond),
		Grace:    500 * time.Millisecond,
	})
	if !res.TimedOut || res.Signal != "killed" {
		t.Errorf("%+v, want TimedOut and killed", res)
	}
	if d := time.Since(start); d < 700*time.Millisecond || d > slow {
		t.Errorf("took %v, want the deadline plus the grace", d)
	}
}

// TestRunGroupKilled checks that a background child in the process group
// does not survive, whether the run stops or the main process exits.
func TestRunGroupKilled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		script   string
		deadline time.Duration
		grace    time.Duration
		within   time.Duration
	}{
		// The group empties on SIGTERM, well before the grace period ends.
		{"deadline", "sleep 100 & echo $! > pidfile; sleep 100", 300 * time.Millisecond, 10 * time.Second, 5 * time.Second},
		{"deadline, child ignores TERM", `trap "" TERM; sleep 100 & echo $! > pidfile; trap - TERM; sleep 100`,
			300 * time.Millisecond, time.Second, slow},
		{"main exits", "sleep 100 & echo $! > pidfile; exit 0", 0, 0, 5 * time.Second},
		{"main exits, child holds output", "(echo child; sleep 100) & echo $! > pidfile; exit 0", 0, 0, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := Spec{Argv: sh(tt.script), Dir: dir, Grace: tt.grace}
			if tt.deadline > 0 {
				s.Deadline = time.Now().Add(tt.deadline)
			}
			start := time.Now()
			res := run(t, t.Context(), s)
			if d := time.Since(start); d > tt.within {
				t.Errorf("took %v, want under %v", d, tt.within)
			}
			if res.TimedOut != (tt.deadline > 0) {
				t.Errorf("TimedOut = %v", res.TimedOut)
			}
			data, err := os.ReadFile(filepath.Join(dir, "pidfile"))
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			if !gone(pid, 3*time.Second) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("background child %d survived the run", pid)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		in    string
		state byte
		pgrp  int
		ok    bool
	}{
		{"42 (sleep) S 1 40 40 0 -1", 'S', 40, true},
		{"42 (a b) c) Z 1 7 7 0", 'Z', 7, true},
		{"42 (x) R", 0, 0, false},
		{"42 (x) R 1 7", 'R', 7, true},
		{"42 (x) RR 1 7", 0, 0, false},
		{"garbage", 0, 0, false},
	}
	for _, tt := range tests {
		state, pgrp, ok := parseStat([]byte(tt.in))
		if state != tt.state || pgrp != tt.pgrp || ok != tt.ok {
			t.Errorf("parseStat(%q) = %q, %d, %v; want %q, %d, %v", tt.in, state, pgrp, ok, tt.state, tt.pgrp, tt.ok)
		}
	}
}

// gone reports whether pid has exited within wait. A zombie counts as
// gone: an orphan is reaped by PID 1, which in a container may never do
// it.
func gone(pid int, wait time.Duration) bool {
	end := time.Now().Add(wait)
	for {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return true
			}
			if syscall.Kill(pid, 0) != nil { // no /proc
				return true
			}
		} else if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
			if state := data[i+2]; state == 'Z' || state == 'X' {
				return true
			}
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunIdle(t *testing.T) {
	t.Parallel()
	t.Run("silent", func(t *testing.T) {
		t.Parallel()
		start := time.Now()
		res := run(t, t.Context(), Spec{Argv: sh("echo started; sleep 100"), IdleTimeout: 500 * time.Millisecond})
		if !res.Idle || res.TimedOut || res.Canceled || res.ExitCode != -1 {
			t.Errorf("%+v, want Idle only", res)
		}
		if d := time.Since(start); d > slow {
			t.Errorf("took %v", d)
		}
	})
	t.Run("chatty", func(t *testing.T) {
		t.Parallel()
		// Silent for at most 0.2s at a time over 6s, under a 3s idle
		// timeout: a loaded machine may stretch a gap, never fifteenfold.
		script := "i=0; while [ $i -lt 30 ]; do echo $i; sleep 0.2; i=$((i+1)); done"
		res := run(t, t.Context(), Spec{Argv: sh(script), IdleTimeout: 3 * time.Second})
		if res.Idle || res.ExitCode != 0 {
			t.Errorf("%+v, want a clean exit", res)
		}
	})
	t.Run("stderr counts", func(t *testing.T) {
		t.Parallel()
		script := "i=0; while [ $i -lt 30 ]; do echo $i >&2; sleep 0.2; i=$((i+1)); done"
		res := run(t, t.Context(), Spec{Argv: sh(script), IdleTimeout: 3 * time.Second, Stdout: io.Discard})
		if res.Idle || res.ExitCode != 0 {
			t.Errorf("%+v, want a clean exit", res)
		}
	})
}

func TestRunCanceled(t *testing.T) {
	t.Parallel()
	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		res := run(t, ctx, Spec{Argv: []string{"sleep", "100"}})
		if !res.Canceled || res.TimedOut || res.Idle || res.Signal != "terminated" {
			t.Errorf("%+v, want Canceled and terminated", res)
		}
		if d := time.Since(start); d > slow {
			t.Errorf("took %v", d)
		}
	})
	t.Run("ctx deadline", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		res := run(t, ctx, Spec{Argv: []string{"sleep", "100"}})
		if !res.TimedOut || res.Canceled {
			t.Errorf("%+v, want TimedOut", res)
		}
	})
	t.Run("before start", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		res := run(t, ctx, Spec{Argv: []string{"true"}})
		if !res.Canceled || res.ExitCode != -1 {
			t.Errorf("%+v, want Canceled and -1", res)
		}
	})
}

func TestRunStartError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noexec := filepath.Join(dir, "script")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	tests := []struct {
		name   string
		spec   Spec
		is     error
		substr string
	}{
		{"not in PATH", Spec{Argv: []string{"treeloop-no-such-command"}}, exec.ErrNotFound,
			`start "treeloop-no-such-command": executable file not found in $PATH`},
		{"missing path", Spec{Argv: []string{filepath.Join(dir, "missing")}}, fs.ErrNotExist, "no such file"},
		{"not executable", Spec{Argv: []string{noexec}}, fs.ErrPermission, "permission denied"},
		{"bad dir", Spec{Argv: []string{"true"}, Dir: filepath.Join(dir, "nope")}, fs.ErrNotExist,
			`start "true": chdir ` + filepath.Join(dir, "nope") + ": no such file or directory"},
		{"dir is a file", Spec{Argv: []string{"true"}, Dir: noexec}, syscall.ENOTDIR, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(t.Context(), tt.spec)
			if err == nil {
				t.Fatalf("no error; result %+v", res)
			}
			var se *StartError
			if !errors.As(err, &se) || !errors.Is(err, tt.is) {
				t.Errorf("error %v (%T) is not a StartError wrapping %v", err, err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("error %q does not contain %q", err, tt.substr)
			}
			if res.ExitCode != -1 {
				t.Errorf("ExitCode = %d, want -1", res.ExitCode)
			}
		})
	}
	if _, err := Run(t.Context(), Spec{}); err == nil {
		t.Error("empty Argv: no error")
	}
}

// TestRunOutputError checks that a failing sink is reported without
// disturbing the process or the other sinks.
func TestRunOutputError(t *testing.T) {
	t.Parallel()
	var tee syncBuffer
	res := run(t, t.Context(), Spec{Argv: sh("echo one; echo two"), Log: &failWriter{after: 2}, Tee: &tee})
	if res.ExitCode != 0 || res.OutputErr == nil || !strings.HasPrefix(res.OutputErr.Error(), "write log: ") {
		t.Errorf("%+v, want exit 0 and a log write error", res)
	}
	if tee.String() != "one\ntwo\n" {
		t.Errorf("tee = %q", tee.String())
	}
}

// TestRunCappedLog pushes 50 MB through a 100,000-byte log cap.
func TestRunCappedLog(t *testing.T) {
	t.Parallel()
	const n, c = 6_500_000, 100_000
	path := filepath.Join(t.TempDir(), "executor.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	log := NewCappedWriter(f, c)
	res := run(t, t.Context(), Spec{Argv: []string{"seq", strconv.Itoa(n)}, Log: log})
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var want []byte
	for i := 1; i <= n; i++ {
		want = strconv.AppendInt(want, int64(i), 10)
		want = append(want, '\n')
	}
	if res.ExitCode != 0 || res.OutputBytes != int64(len(want)) || log.Total() != int64(len(want)) || !log.Truncated() {
		t.Fatalf("%+v, Total %d, want exit 0 and %d bytes truncated", res, log.Total(), len(want))
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != c {
		t.Fatalf("log is %d bytes, want %d", len(got), c)
	}
	if !bytes.Equal(got, capped(want, c)) {
		t.Fatalf("log differs from the capping rule; tail %q", lastN(got, 60))
	}
	if !bytes.Contains(got, []byte(" bytes truncated]\n")) || !bytes.HasSuffix(got, []byte("\n6500000\n")) {
		t.Fatalf("log lacks the marker or the real last bytes: tail %q", lastN(got, 60))
	}
}

// BenchmarkRunGiB runs 1 GiB of output through Run into a 100,000-byte
// capped log and reports the peak RSS of the test process: peak-rss-KiB
// from getrusage, and vm-hwm-KiB from /proc/self/status. Linux carries
// ru_maxrss across execve, so under "go test" peak-rss-KiB can show the go
// command's own peak; VmHWM, or running the compiled test binary directly,
// gives the test process alone.
func BenchmarkRunGiB(b *testing.B) {
	const size = 1 << 30
	path := filepath.Join(b.TempDir(), "executor.log")
	b.SetBytes(size)
	for b.Loop() {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		log := NewCappedWriter(f, 100_000)
		res, err := Run(b.Context(), Spec{Argv: []string{"head", "-c", strconv.Itoa(size), "/dev/zero"}, Log: log})
		if err != nil {
			b.Fatal(err)
		}
		log.Close()
		f.Close()
		if res.ExitCode != 0 || log.Total() != size {
			b.Fatalf("%+v, Total %d", res, log.Total())
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(ru.Maxrss), "peak-rss-KiB")
	if hwm, ok := vmHWM(); ok {
		b.ReportMetric(float64(hwm), "vm-hwm-KiB")
	}
}

// vmHWM returns the peak resident set size of this process in KiB, as
// /proc/self/status reports it.
func vmHWM() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// TestRunKillEscaped runs in a child test process (escapedHelper): a
// subreaper reaps every child of its process, which would race the other
// tests' runs.
func TestRunKillEscaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestEscapedHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "PROC_ESCAPED_HELPER="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "escaped=2\n") {
		t.Errorf("helper output lacks escaped=2:\n%s", out)
	}
	for _, name := range []string{"setsid.pid", "doublefork.pid", "ingroup.pid"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if !gone(pid, 3*time.Second) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("%s: process %d survived the run", name, pid)
		}
	}
}

// TestEscapedHelper is TestRunKillEscaped's child: a script that starts
// one process in a new session, one through a double fork into a new
// session, and one through a double fork that stays in the group (killed
// with the group, so not counted as escaped), then exits.
func TestEscapedHelper(t *testing.T) {
	dir := os.Getenv("PROC_ESCAPED_HELPER")
	if dir == "" {
		return // only meaningful as TestRunKillEscaped's child
	}
	// Each writes its pid as the runner sees it (the session may run in
	// a PID namespace of its own, where $$ differs): /proc is the
	// runner's, and /proc/self/stat opened by the shell itself starts
	// with the shell's pid there.
	script := `setsid sh -c 'read -r p _ </proc/self/stat; echo $p > setsid.pid; exec sleep 100' </dev/null >/dev/null 2>&1 &
(sh -c 'setsid sh -c "read -r p _ </proc/self/stat; echo \$p > doublefork.pid; exec sleep 100" </dev/null >/dev/null 2>&1 &' &)
(sh -c 'sh -c "read -r p _ </proc/self/stat; echo \$p > ingroup.pid; exec sleep 100" </dev/null >/dev/null 2>&1 &' &)
while [ ! -s setsid.pid ] || [ ! -s doublefork.pid ] || [ ! -s ingroup.pid ]; do sleep 0.01; done
exit 0`
	res := run(t, t.Context(), Spec{Argv: sh(script), Dir: dir, KillEscaped: true})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d", res.ExitCode)
	}
	fmt.Printf("escaped=%d\n", res.Escaped)
}

// TestCloseInheritedMarksCloseOnExec: a descriptor this process got
// without close-on-exec (as runner-step's lock reaches every command) is
// close-on-exec after CloseInherited, by close_range(2) or, where the
// kernel has none, by the list of /proc/self/fd; stdin, stdout and stderr
// are left as they were.
func TestCloseInheritedMarksCloseOnExec(t *testing.T) {
	cloexec := func(fd int) bool {
		flags, err := unix.FcntlInt(uintptr(fd), syscall.F_GETFD, 0)
		if err != nil {
			t.Fatal(err)
		}
		return flags&syscall.FD_CLOEXEC != 0
	}
	for _, c := range []struct {
		name  string
		close func()
	}{{"close_range", closeInherited}, {"listed", func() { closeListed("/proc/self/fd") }}} {
		fd, err := syscall.Dup(0) // dup(2): no close-on-exec
		if err != nil {
			t.Fatal(err)
		}
		if cloexec(fd) {
			t.Fatal("dup(2) set close-on-exec")
		}
		std := []bool{cloexec(0), cloexec(1), cloexec(2)}
		c.close()
		if !cloexec(fd) {
			t.Errorf("%s: descriptor still inherited", c.name)
		}
		if now := []bool{cloexec(0), cloexec(1), cloexec(2)}; !slices.Equal(now, std) {
			t.Errorf("%s: stdin, stdout, stderr close-on-exec %v, were %v", c.name, now, std)
		}
		syscall.Close(fd)
	}
}

// RunToFileSyncing returns with the whole output in the log, the sync
// still to wait for; an unwritable log is the error, with nothing to sync.
func TestRunToFileSyncing(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "guard.log")
	res, info, synced, err := RunToFileSyncing(context.Background(), Spec{Argv: sh("echo out; echo err >&2; exit 3")}, logPath, 1<<20)
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("RunToFileSyncing = exit %d, %v", res.ExitCode, err)
	}
	if data, _ := os.ReadFile(logPath); string(data) != "out\nerr\n" || info.Bytes != 8 {
		t.Errorf("log %q (%d bytes counted) before the sync, want the whole output", data, info.Bytes)
	}
	if err := synced(); err != nil {
		t.Errorf("synced: %v", err)
	}
	_, _, synced, err = RunToFileSyncing(context.Background(), Spec{Argv: sh("true")}, filepath.Join(t.TempDir(), "missing", "guard.log"), 1<<20)
	if err == nil || !strings.Contains(err.Error(), "create log") || synced() != nil {
		t.Errorf("unwritable log: %v", err)
	}
}

// waitWriter is a syncBuffer that closes seen once what it holds contains
// want.
type waitWriter struct {
	syncBuffer
	want string
	seen chan struct{}
	once sync.Once
}

func newWaitWriter(want string) *waitWriter {
	return &waitWriter{want: want, seen: make(chan struct{})}
}

func (w *waitWriter) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// TestRunInterrupt checks that a done ctx sends Spec.Interrupt and gives
// the group InterruptGrace, not Grace: the trap takes longer than Grace
// and still ends the process with its own exit code.
func TestRunInterrupt(t *testing.T) {
	t.Parallel()
	log := newWaitWriter("ready")
	ctx := canceledOn(t, log)
	res := run(t, ctx, Spec{
		Argv:           sh(`trap 'sleep 0.3; echo got INT; exit 7' INT; echo ready; while :; do sleep 0.05; done`),
		Log:            log,
		Grace:          10 * time.Millisecond,
		Interrupt:      syscall.SIGINT,
		InterruptGrace: time.Minute,
	})
	if !res.Canceled || res.TimedOut || res.ExitCode != 7 || res.Status() != 7 {
		t.Errorf("%+v, want Canceled and exit 7", res)
	}
	if !strings.Contains(log.String(), "got INT\n") {
		t.Errorf("log %q lacks the trap's line", log.String())
	}
}

// TestRunKill checks that closing Spec.Kill kills the whole group at
// once, within a grace period it would otherwise have waited out.
func TestRunKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := newWaitWriter("ready")
	ctx, cancel := context.WithCancel(t.Context())
	kill := make(chan struct{})
	go func() {
		<-log.seen
		cancel() // SIGTERM, ignored
		close(kill)
	}()
	start := time.Now()
	res := run(t, ctx, Spec{
		Argv:  sh(`trap '' TERM; sleep 100 & echo $! > pidfile; echo ready; wait`),
		Dir:   dir,
		Log:   log,
		Grace: time.Hour,
		Kill:  kill,
	})
	if !res.Canceled || res.Signal != "killed" || res.Status() != 137 {
		t.Errorf("%+v, want Canceled and killed", res)
	}
	if d := time.Since(start); d > slow {
		t.Errorf("took %v", d)
	}
	data, err := os.ReadFile(filepath.Join(dir, "pidfile"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if !gone(pid, 3*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("background child %d survived Kill", pid)
	}
}

// TestRunDeadlineNote checks that the note reaches Log and Tee when the
// deadline is reached, after the output so far and before any that the
// signal brings.
func TestRunDeadlineNote(t *testing.T) {
	t.Parallel()
	var log, tee syncBuffer
	const note = "test: out of time: sending SIGTERM"
	res := run(t, t.Context(), Spec{
		Argv:         sh(`echo before; exec sleep 100`),
		Log:          &log,
		Tee:          &tee,
		Deadline:     time.Now().Add(300 * time.Millisecond),
		DeadlineNote: note,
	})
	if !res.TimedOut {
		t.Errorf("%+v, want TimedOut", res)
	}
	if !strings.HasSuffix(log.String(), "\n"+note+"\n") && log.String() != note+"\n" {
		t.Errorf("log %q does not end with the note", log.String())
	}
	if tee.String() != log.String() {
		t.Errorf("tee %q, log %q", tee.String(), log.String())
	}
}

// TestRunSpared: a run with KillEscaped whose process group ends while a
// Spared run goes on beside it kills what escaped it, and neither kills
// nor reaps the spared run's process, which ends with its own status. In
// a child test process (sparedHelper), as TestRunKillEscaped.
func TestRunSpared(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSparedHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "PROC_SPARED_HELPER="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "escaped=1 spared=7\n") {
		t.Errorf("helper output lacks escaped=1 spared=7:\n%s", out)
	}
}

func TestSparedHelper(t *testing.T) {
	dir := os.Getenv("PROC_SPARED_HELPER")
	if dir == "" {
		return // only meaningful as TestRunSpared's child
	}
	spared := make(chan Result, 1)
	go func() {
		spared <- run(t, t.Context(), Spec{Argv: sh("echo > started; while [ ! -e go ]; do sleep 0.01; done; exit 7"), Dir: dir, Spared: true})
	}()
	for {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// OwnNamespace: no session init, so the sweep of escaped processes
	// runs in this process, where the spared one is a child too.
	res := run(t, t.Context(), Spec{Argv: sh(`setsid sh -c 'echo > esc; exec sleep 100' </dev/null >/dev/null 2>&1 &
while [ ! -e esc ]; do sleep 0.01; done`), Dir: dir, KillEscaped: true, OwnNamespace: true})
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	fmt.Printf("escaped=%d spared=%d\n", res.Escaped, (<-spared).ExitCode)
}
