package proc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeSandbox is a sandbox in the shape of bubblewrap with
// --json-status-fd 3: it reports the child's pid on descriptor 3, then,
// while the counter file holds less than FAILS, fails as bubblewrap does
// when a mount goes away while it copies the file system's view (exit 1,
// its line on stderr, no exit code reported); else it runs the command
// and reports its exit code. Usage: fake-sandbox COUNTER FAILS CMD...
const fakeSandbox = `counter=$1 fails=$2; shift 2
n=$(cat "$counter" 2>/dev/null || echo 0); echo $((n+1)) > "$counter"
echo '{ "child-pid": 4242 }' >&3
if [ "$n" -lt "$fails" ]; then
  echo "bwrap: Can't bind mount /oldroot/var/lib/docker/overlay2/x/merged on /newroot/var/lib/docker/overlay2/x/merged: No such file or directory" >&2
  exit 1
fi
"$@" 3>&-
rc=$?
echo "{ \"exit-code\": $rc }" >&3
exit $rc`

// neverRan is Spec.Restart as sandbox.NeverRan judges, in short: no exit
// code reported, and only the sandbox's own line printed.
func neverRan(report, out []byte) bool {
	return !bytes.Contains(report, []byte(`"exit-code"`)) && strings.HasPrefix(string(out), "bwrap: ")
}

func sandboxed(t *testing.T, fails int, argv ...string) (Spec, string) {
	counter := filepath.Join(t.TempDir(), "starts")
	return Spec{Argv: append([]string{"sh", "-c", fakeSandbox, "fake-sandbox", counter, string(rune('0' + fails))}, argv...), Restart: neverRan, OwnNamespace: true}, counter
}

func starts(t *testing.T, counter string) string {
	t.Helper()
	b, err := os.ReadFile(counter)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestRestartNeverRan: a sandbox that fails before it runs the command is
// started again, its input fed again from the start, and the log says so
// between its line and the command's output.
func TestRestartNeverRan(t *testing.T) {
	t.Parallel()
	s, counter := sandboxed(t, 1, "cat")
	var log syncBuffer
	s.Log, s.Stdin = &log, bytes.NewReader([]byte("the prompt\n"))
	var reports []string
	restart := s.Restart
	s.Restart = func(report, out []byte) bool {
		reports = append(reports, string(report))
		return restart(report, out)
	}
	res := run(t, t.Context(), s)
	if res.ExitCode != 0 || res.Starts != 2 {
		t.Fatalf("exit %d after %d starts, want 0 after 2\n%s", res.ExitCode, res.Starts, log.String())
	}
	if got := starts(t, counter); got != "2" {
		t.Errorf("the sandbox started %s times, want 2", got)
	}
	want := "bwrap: Can't bind mount /oldroot/var/lib/docker/overlay2/x/merged on /newroot/var/lib/docker/overlay2/x/merged: No such file or directory\n" +
		"[treeloop] the sandbox did not start the command (bwrap: Can't bind mount /oldroot/var/lib/docker/overlay2/x/merged on /newroot/var/lib/docker/overlay2/x/merged: No such file or directory): starting it again (2 of 3)\n" +
		"the prompt\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
	// Only the failed start is asked about: the second exited 0.
	if len(reports) != 1 || reports[0] != "{ \"child-pid\": 4242 }\n" {
		t.Errorf("reports %q: want the first start's alone, without an exit code", reports)
	}
}

// TestRestartBounded: a sandbox that never runs the command is started
// MaxStarts times, and the last run's failure is the result.
func TestRestartBounded(t *testing.T) {
	t.Parallel()
	s, counter := sandboxed(t, 9, "true")
	var log syncBuffer
	s.Log = &log
	res := run(t, t.Context(), s)
	if res.ExitCode != 1 || res.Starts != MaxStarts {
		t.Fatalf("exit %d after %d starts, want 1 after %d\n%s", res.ExitCode, res.Starts, MaxStarts, log.String())
	}
	if got := starts(t, counter); got != "3" {
		t.Errorf("the sandbox started %s times, want 3", got)
	}
	if n := strings.Count(log.String(), "[treeloop] the sandbox did not start the command"); n != MaxStarts-1 {
		t.Errorf("%d notes, want %d:\n%s", n, MaxStarts-1, log.String())
	}
}

// TestRestartNotAfterRun: a command that ran is never started again,
// whatever it printed or how it ended, nor one whose sandbox failed
// when its input cannot be fed again or when it was stopped.
func TestRestartNotAfterRun(t *testing.T) {
	t.Parallel()
	t.Run("ran and failed", func(t *testing.T) {
		t.Parallel()
		s, counter := sandboxed(t, 0, "sh", "-c", "echo 'bwrap: a line of its own' >&2; exit 1")
		res := run(t, t.Context(), s)
		if res.ExitCode != 1 || res.Starts != 1 || starts(t, counter) != "1" {
			t.Errorf("exit %d after %d starts (%s), want 1 after 1", res.ExitCode, res.Starts, starts(t, counter))
		}
	})
	t.Run("restart says no", func(t *testing.T) {
		t.Parallel()
		s, counter := sandboxed(t, 1, "true")
		s.Restart = func(report, out []byte) bool { return false }
		res := run(t, t.Context(), s)
		if res.ExitCode != 1 || res.Starts != 1 || starts(t, counter) != "1" {
			t.Errorf("exit %d after %d starts, want 1 after 1", res.ExitCode, res.Starts)
		}
	})
	t.Run("input a pipe", func(t *testing.T) {
		t.Parallel()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		w.WriteString("the prompt\n")
		w.Close()
		s, counter := sandboxed(t, 1, "cat")
		s.Stdin = r
		res := run(t, t.Context(), s)
		if res.ExitCode != 1 || res.Starts != 1 || starts(t, counter) != "1" {
			t.Errorf("exit %d after %d starts, want 1 after 1: a pipe's input cannot be fed again", res.ExitCode, res.Starts)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		t.Parallel()
		s, counter := sandboxed(t, 1, "true")
		// The sandbox fails after the deadline: a run that was stopped
		// is not started again, even when the sandbox never ran it.
		s.Argv = append([]string{"sh", "-c", "sleep 30; exec \"$@\"", "slow"}, s.Argv...)
		s.Deadline = time.Now().Add(200 * time.Millisecond)
		res := run(t, t.Context(), s)
		if !res.TimedOut || res.Starts != 1 {
			t.Errorf("timed out %v after %d starts, want a timeout after 1", res.TimedOut, res.Starts)
		}
		if _, err := os.Stat(counter); err == nil {
			t.Errorf("the sandbox started after the deadline")
		}
	})
}

// TestRestartNotWhenStopped: whatever Restart would say, a run is not
// started again when it did not fail as a program does (exit 1) on its
// own: killed by a signal, stopped for silence, interrupted, killed at
// once, or with more output than Restart is given.
func TestRestartNotWhenStopped(t *testing.T) {
	t.Parallel()
	always := func(report, out []byte) bool { return true }
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name   string
		script string
		ctx    context.Context
		tweak  func(*Spec)
	}{
		{"exit 1", "exit 1", nil, nil}, // the control: started MaxStarts times
		{"signal", "echo 'bwrap: x'; kill -9 $$", nil, nil},
		{"exit 2", "exit 2", nil, nil},
		{"idle", "sleep 30", nil, func(s *Spec) { s.IdleTimeout = 100 * time.Millisecond }},
		{"canceled", "sleep 30; exit 1", canceled, nil},
		{"killed", "sleep 30; exit 1", nil, func(s *Spec) {
			// Killed once it has started (its line is in the counter).
			k := make(chan struct{})
			counter := s.Argv[2][len("echo x >> "):strings.Index(s.Argv[2], ";")]
			go func() {
				defer close(k)
				for {
					if b, _ := os.ReadFile(counter); len(b) > 0 {
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
			s.Kill = k
		}},
		{"over 4 KiB", "head -c 5000 /dev/zero | tr '\\0' b; exit 1", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			counter := filepath.Join(t.TempDir(), "starts")
			s := Spec{Argv: sh("echo x >> " + counter + "; " + c.script), Restart: always}
			if c.tweak != nil {
				c.tweak(&s)
			}
			ctx := c.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			res := run(t, ctx, s)
			want := 1
			if c.name == "exit 1" {
				want = MaxStarts
			}
			if c.name == "canceled" {
				want = 0 // a context done before the start starts nothing
			}
			b, _ := os.ReadFile(counter)
			if got := strings.Count(string(b), "x"); got != want || (want > 0 && res.Starts != want) {
				t.Errorf("started %d times (Starts %d), want %d", got, res.Starts, want)
			}
		})
	}
}

// TestRestartStdinStalled: a run whose input was still being copied when
// it ended is not started again: its input cannot be fed again whole.
func TestRestartStdinStalled(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "starts")
	s := Spec{Argv: sh("echo x >> " + counter + "; exit 1"), Restart: func(report, out []byte) bool { return true }}
	s.Stdin = &stalled{bytes.NewReader([]byte("the prompt")), make(chan struct{})}
	defer close(s.Stdin.(*stalled).release)
	res := run(t, t.Context(), s)
	if b, _ := os.ReadFile(counter); string(b) != "x\n" || res.Starts != 1 {
		t.Errorf("started %q (Starts %d), want once", b, res.Starts)
	}
}

// stalled is a seekable input whose Read blocks until release.
type stalled struct {
	r       *bytes.Reader
	release chan struct{}
}

func (s *stalled) Read(p []byte) (int, error) {
	<-s.release
	return s.r.Read(p)
}

func (s *stalled) Seek(off int64, whence int) (int64, error) { return s.r.Seek(off, whence) }

// TestRestartNeedsOwnNamespace: Restart with KillEscaped under the
// session init is refused (both report on descriptor 3).
func TestRestartNeedsOwnNamespace(t *testing.T) {
	t.Parallel()
	res, err := Run(t.Context(), Spec{Argv: sh("true"), KillEscaped: true, Restart: func(report, out []byte) bool { return false }})
	if err == nil || !strings.Contains(err.Error(), "needs OwnNamespace") || res.ExitCode != -1 || res.Starts != 0 {
		t.Errorf("%+v, %v, want the refusal, nothing started", res, err)
	}
}

// TestLastStart: what the last start wrote follows the last note.
func TestLastStart(t *testing.T) {
	t.Parallel()
	note := RestartNote + " (bwrap: x): starting it again (2 of 3)\n"
	for _, c := range []struct{ log, want string }{
		{"all of it\n", "all of it\n"},
		{"bwrap: x\n" + note + "second\n", "second\n"},
		{"bwrap: x\n" + note + "bwrap: x\n" + RestartNote + " (bwrap: x): starting it again (3 of 3)\nthird\n", "third\n"},
		{"a line that quotes " + RestartNote + " inside\n", "a line that quotes " + RestartNote + " inside\n"},
		{"bwrap: x\n" + note, ""},
		{note + "second\n", "second\n"},
	} {
		if got := string(LastStart([]byte(c.log))); got != c.want {
			t.Errorf("LastStart(%q) = %q, want %q", c.log, got, c.want)
		}
	}
}

// TestStartsWithoutRestart: a run without Spec.Restart is started once,
// and its descriptor 3 is not open.
func TestStartsWithoutRestart(t *testing.T) {
	t.Parallel()
	res := run(t, t.Context(), Spec{Argv: sh("[ -e /proc/self/fd/3 ] && exit 7; exit 0")})
	if res.ExitCode != 0 || res.Starts != 1 {
		t.Errorf("exit %d after %d starts, want 0 after 1 (descriptor 3 closed)", res.ExitCode, res.Starts)
	}
}

// TestRestartOutputBound: a sandbox that failed printing RestartOutput
// bytes is asked about and started again; one that printed a byte more
// is not (its output was not all read for the question).
func TestRestartOutputBound(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		printed, starts int
	}{{RestartOutput, 2}, {RestartOutput + 1, 1}} {
		dir := t.TempDir()
		// The first start prints "bwrap: " and filler, printed bytes in all,
		// and exits 1; the second exits 0.
		script := `n=$(cat starts 2>/dev/null || echo 0); echo $((n+1)) > starts
if [ "$n" -lt 1 ]; then printf 'bwrap: '; head -c $(($1 - 7)) /dev/zero | tr '\0' x; exit 1; fi`
		s := Spec{Argv: []string{"sh", "-c", script, "fake-sandbox", strconv.Itoa(c.printed)}, Dir: dir, OwnNamespace: true,
			Restart: func(_, out []byte) bool { return strings.HasPrefix(string(out), "bwrap: ") }}
		res := run(t, t.Context(), s)
		if res.Starts != c.starts || res.ExitCode != 2-c.starts {
			t.Errorf("%d bytes printed: exit %d after %d starts, want %d after %d", c.printed, res.ExitCode, res.Starts, 2-c.starts, c.starts)
		}
	}
}
