package guard

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/proc"
)

// junit is a JUnit XML report of tests named "s::<name>", each passed or,
// with a "!" before its name, failed.
func junit(tests ...string) string {
	var b strings.Builder
	b.WriteString(`<testsuite name="s">`)
	for _, t := range tests {
		if name, ok := strings.CutPrefix(t, "!"); ok {
			b.WriteString(`<testcase classname="s" name="` + name + `"><failure message="` + name + ` broke">trace</failure></testcase>`)
			continue
		}
		b.WriteString(`<testcase classname="s" name="` + t + `"/>`)
	}
	return b.String() + "</testsuite>"
}

// guardCase is one guard's run for TestGuardOutcomes: its command (an sh
// script), what it is judged by, and what its record must say.
type guardCase struct {
	name     string
	script   string                     // sh -c; "" for command
	command  []string                   // the guard's argv when script is ""
	deadline time.Duration              // from now; a minute when 0
	ratchet  string                     // [guard] ratchet's sh -c script, "" for none
	mode     string                     // [sandbox] mode; "" for none
	results  bool                       // [guard] results on: j.Results is a directory of the test's
	best     Best                       // the run's best
	outcome  string                     // guard.json's outcome
	code     int                        // the exit code of the outcome
	says     string                     // in the message ("" for none)
	logEnds  string                     // the guard's log ends with it ("" for not checked)
	check    func(iterdir.Guard) string // more, "" when it holds
}

// TestGuardOutcomes: every way a guard's run ends, from real processes,
// and the record each leaves: a pass; a failure by exit status or by a
// signal; a command that cannot start (not found by the runner, or by the
// guard's shell) a runner error, never a failure, its log ending with why;
// a deadline a timeout; a guard under bwrap that cannot write outside the
// repository; a green guard turned into a failure by the
// ratchet's count, by a failing test its output or results report, by a
// test of the run's best that did not pass; a failed guard's log ending
// with its failing tests by name; a results directory that cannot be made
// a guard not started.
func TestGuardOutcomes(t *testing.T) {
	in := cli.NotifyInterrupt()
	defer in.Stop()
	// A program on PATH, outside the work tree, that cannot run (its
	// interpreter is not there).
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "treeloop-test-tool"), []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	// A directory outside every repository, which bwrap keeps read-only.
	t.Setenv("TREELOOP_TEST_OUTSIDE", t.TempDir())
	report := func(tests ...string) string {
		return "cat > \"$RUNNER_TEST_RESULTS/r.xml\" <<'EOF'\n" + junit(tests...) + "\nEOF\n"
	}
	for _, c := range []guardCase{
		{name: "pass", script: "echo fine", outcome: Pass, code: exit.OK,
			check: func(r iterdir.Guard) string {
				if r.Ratchet != nil || r.Evidence != nil || r.ExitCode != 0 || r.StartedAt == "" || r.LogBytes != 5 {
					return "a plain pass records a ratchet, evidence, no start or the wrong log size"
				}
				return ""
			}},
		{name: "exit status", script: "exit 3", outcome: Fail, code: exit.Negative, says: "guard failed (exit 3)"},
		{name: "signal", script: "kill -KILL $$", outcome: Fail, code: exit.Negative, says: "guard failed (killed)",
			check: func(r iterdir.Guard) string {
				if r.Signal != "killed" || r.ExitCode != -1 {
					return "the signal is not recorded"
				}
				return ""
			}},
		{name: "not found", command: []string{"/nonexistent/treeloop-guard"}, outcome: Error, code: exit.RunnerError,
			says: "the guard could not start:"},
		{name: "not found by its shell", script: "treeloop-no-such-program --check", outcome: Fail, code: exit.Negative,
			says: "guard failed (exit 127)"},
		{name: "cannot run, found by its shell", script: "treeloop-test-tool", outcome: Error, code: exit.RunnerError,
			says: "the guard cannot start (exit 127): treeloop-test-tool cannot start", logEnds: "the guard cannot start (exit 127)"},
		{name: "confined", script: "echo x > \"$TREELOOP_TEST_OUTSIDE/f\" || exit 9; echo y > inside", mode: config.SandboxBwrap,
			outcome: Fail, code: exit.Negative, says: "guard failed (exit 9)",
			check: func(r iterdir.Guard) string {
				if r.Sandbox != config.SandboxBwrap {
					return "the sandbox is not recorded"
				}
				return ""
			}},
		{name: "confined, writing the repository", script: "echo y > inside && test -s inside", mode: config.SandboxBwrap, outcome: Pass, code: exit.OK},
		{name: "deadline", script: "exec sleep 60", deadline: 300 * time.Millisecond, outcome: Timeout, code: exit.Timeout,
			says: "guard timed out"},
		{name: "ratchet below the best", script: "exit 0", ratchet: "echo 2", best: Best{Found: true, Count: 5, Commit: "0123456789abcdef"},
			outcome: Fail, code: exit.Negative, says: "only 2 tests passed, fewer than the 5", logEnds: "fewer than the 5 this run reached (commit 0123456789ab)",
			check: func(r iterdir.Guard) string {
				if r.Ratchet == nil || r.Ratchet.Count != 2 || r.Ratchet.Best != 5 || r.Ratchet.Held {
					return "the ratchet's record is not the count against the best"
				}
				return ""
			}},
		{name: "ratchet holds", script: "exit 0", ratchet: "echo 5", best: Best{Found: true, Count: 5}, outcome: Pass, code: exit.OK,
			check: func(r iterdir.Guard) string {
				if r.Ratchet == nil || !r.Ratchet.Held || r.Ratchet.Names != -1 {
					return "the ratchet's record does not hold, or counts names it had none of"
				}
				return ""
			}},
		{name: "results all pass", script: report("a", "b"), results: true, outcome: Pass, code: exit.OK,
			check: func(r iterdir.Guard) string {
				if r.Evidence == nil || !r.Evidence.Held {
					return "the evidence does not hold"
				}
				return ""
			}},
		{name: "results report a failure", script: report("a", "!b"), results: true, outcome: Fail, code: exit.Negative, says: "s::b"},
		{name: "a test of the best missing", script: report("a"), results: true, best: Best{Names: []string{"s::a", "s::gone"}},
			outcome: Fail, code: exit.Negative, says: "s::gone"},
		{name: "failed with results", script: report("a", "!b") + "exit 1", results: true, outcome: Fail, code: exit.Negative,
			says: "guard failed (exit 1)", logEnds: "b broke",
			check: func(r iterdir.Guard) string {
				if r.Evidence == nil || r.Evidence.Held {
					return "a failed guard's evidence is missing or holds"
				}
				return ""
			}},
		{name: "a test's printed line is no result beside results files", script: report("a") + "echo '--- PASS: TestForged (0.00s)'", results: true,
			best: Best{Names: []string{"s::a", "TestForged"}}, outcome: Fail, code: exit.Negative, says: "did not pass now (TestForged)"},
		{name: "a test's line counts without results files", script: "echo '--- PASS: TestA (0.00s)'", results: true,
			best: Best{Names: []string{"TestA"}}, outcome: Pass, code: exit.OK},
		{name: "results events without a ratchet", script: `echo '{"Action":"fail","Package":"p","Test":"TestX"}'`, results: true,
			outcome: Fail, code: exit.Negative, says: "p.TestX"},
	} {
		t.Run(c.name, func(t *testing.T) { runGuardCase(t, in, c) })
	}
}

func runGuardCase(t *testing.T, in *cli.Interrupt, c guardCase) {
	dir := t.TempDir()
	env := &cli.Env{Name: "guard-run", Dir: dir, Stdout: io.Discard, Stderr: io.Discard}
	cfg := config.Default()
	cfg.Sandbox.Mode = config.SandboxNone
	if c.mode != "" {
		cfg.Sandbox.Mode = c.mode
		gittest.Run(t, dir, "init", "-q") // a sandbox confines a repository
	}
	cfg.Guard.Command = c.command
	if c.script != "" {
		cfg.Guard.Command = []string{"sh", "-c", c.script}
	}
	if c.ratchet != "" {
		cfg.Guard.Ratchet = []string{"sh", "-c", c.ratchet}
	}
	j := Judging{Best: c.best}
	if c.results {
		j.Results = filepath.Join(dir, "results")
	}
	deadline := c.deadline
	if deadline == 0 {
		deadline = time.Minute
	}
	logPath := filepath.Join(dir, "guard.log")
	rec, code := Guard(in, env, cfg, time.Now().Add(deadline), logPath, j)
	if rec.Outcome != c.outcome || code != c.code || !strings.Contains(rec.Message, c.says) || (c.says == "") != (rec.Message == "") {
		t.Errorf("outcome %s, code %d, message %q; want %s, %d, saying %q", rec.Outcome, code, rec.Message, c.outcome, c.code, c.says)
	}
	if c.logEnds != "" {
		log, _ := os.ReadFile(logPath)
		if !strings.Contains(string(log[max(0, len(log)-300):]), c.logEnds) {
			t.Errorf("the log does not end with %q:\n%s", c.logEnds, log)
		}
	}
	if c.check != nil {
		if msg := c.check(rec); msg != "" {
			t.Errorf("%s: %+v", msg, rec)
		}
	}
}

// TestGuardNotStarted: a results directory that cannot be made (a file
// where its parent should be) is a runner error before the guard starts.
func TestGuardNotStarted(t *testing.T) {
	in := cli.NotifyInterrupt()
	defer in.Stop()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(dir, "ran")
	cfg := config.Default()
	cfg.Sandbox.Mode = config.SandboxNone
	cfg.Guard.Command = []string{"touch", ran}
	env := &cli.Env{Dir: dir, Stdout: io.Discard, Stderr: io.Discard}
	rec, code := Guard(in, env, cfg, time.Now().Add(time.Minute), filepath.Join(dir, "guard.log"), Judging{Results: filepath.Join(dir, "file", "results")})
	if rec.Outcome != Error || code != exit.RunnerError || !strings.HasPrefix(rec.Message, "the guard was not started: ") || !strings.Contains(rec.Message, "not a directory") {
		t.Errorf("outcome %s, code %d, message %q", rec.Outcome, code, rec.Message)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the guard ran")
	}
}

// TestNewRecord: guard.json's record of a run as it ended: escaped
// processes by their command cut at 60 characters, the sandbox only when
// it confined the guard, its starts only when it had to start it again.
func TestNewRecord(t *testing.T) {
	in := cli.NotifyInterrupt()
	defer in.Stop()
	long := strings.Repeat("x", 60)
	res := proc.Result{ExitCode: 0, Escaped: 2, Starts: 1, Duration: 1500 * time.Millisecond,
		EscapedProcs: []proc.Escaped{{Command: "sleep \t 60"}, {Command: long + "y"}, {Command: long}}}
	cfg := config.Default()
	cfg.Sandbox.Mode = config.SandboxBwrap
	cfg.Sandbox.Guard = false
	rec := newRecord(in, cfg, res, proc.LogInfo{Bytes: 7, Truncated: true})
	if rec.Sandbox != "" || rec.SandboxStarts != 0 || rec.DurationMS != 1500 || rec.LogBytes != 7 || !rec.LogTruncated || rec.EscapedKilled != 2 || rec.StartedAt != "" {
		t.Errorf("an unconfined guard's record: %+v", rec)
	}
	if len(rec.Escaped) != 3 || rec.Escaped[0] != "sleep 60" || rec.Escaped[1] != long+"…" || rec.Escaped[2] != long {
		t.Errorf("escaped %q", rec.Escaped)
	}
	cfg.Sandbox.Guard = true
	res.Starts = 2
	res.Started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec = newRecord(in, cfg, res, proc.LogInfo{})
	if rec.Sandbox != config.SandboxBwrap || rec.SandboxStarts != 2 || rec.StartedAt != "2026-01-02T03:04:05Z" {
		t.Errorf("a confined guard's record: %+v", rec)
	}
	if rec.InterruptedAt != "" {
		t.Errorf("interrupted at %q with no interruption", rec.InterruptedAt)
	}
}

// TestLastLineAndNote: the ratchet's last line of output for a one-line
// message; the runner's note at the end of the guard's log, none for an
// empty one, a warning when the log cannot be written.
func TestLastLineAndNote(t *testing.T) {
	for in, want := range map[string]string{"a\nb\n\n": "b", "only": "only", " \n ": "no output", "": "no output", "x\ny  ": "y"} {
		if got := lastLine([]byte(in)); got != want {
			t.Errorf("lastLine(%q) = %q, want %q", in, got, want)
		}
	}
	dir := t.TempDir()
	var stderr strings.Builder
	env := &cli.Env{Name: "guard-run", Dir: dir, Stdout: io.Discard, Stderr: &stderr}
	log := filepath.Join(dir, "guard.log")
	if err := os.WriteFile(log, []byte("output"), 0o644); err != nil {
		t.Fatal(err)
	}
	Note(env, log, "")
	Note(env, log, "why")
	if got, _ := os.ReadFile(log); string(got) != "output\n[treeloop] why\n" {
		t.Errorf("log %q", got)
	}
	if stderr.Len() > 0 {
		t.Errorf("warned %q", stderr.String())
	}
	Note(env, filepath.Join(dir, "missing.log"), "why")
	if !strings.Contains(stderr.String(), "append to guard.log") {
		t.Errorf("no warning for a log that cannot be written: %q", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.log")); err == nil {
		t.Error("Note created the log")
	}
}

// TestUnstartableMessage: what cannot start, where, and the fix: the
// guard's config unconfined; in the sandbox, the readable paths to add,
// or to list them when none is known.
func TestUnstartableMessage(t *testing.T) {
	for _, c := range []struct {
		u    Unstartable
		want []string
	}{
		{Unstartable{Program: "just", Cause: "not found"}, []string{"just cannot start (not found): install it, or set [guard] command"}},
		{Unstartable{Program: "just", Probe: []string{"/usr/bin/just", "--version"}, Cause: "exit 127"}, []string{"just cannot start (`just --version`: exit 127)"}},
		{Unstartable{Program: "node", Cause: "hidden", Confined: true}, []string{"node cannot start in the sandbox (hidden): list what it needs in [sandbox] readable"}},
		{Unstartable{Program: "node", Cause: "hidden", Confined: true, Readable: []string{"~/.nvm"}}, []string{"node cannot start in the sandbox (hidden): ", "~/.nvm"}},
	} {
		got := c.u.Message()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("Message() = %q, want %q in it", got, w)
			}
		}
		if len(c.u.Readable) > 0 && strings.Contains(got, "list what it needs") {
			t.Errorf("Message() = %q: the readable paths known, not named", got)
		}
	}
}

// TestTail: the last n bytes of a file, the whole of a shorter one,
// nothing of one that is not there.
func TestTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int64]string{4: "6789", 10: "0123456789", 20: "0123456789"} {
		if got := string(tail(p, n)); got != want {
			t.Errorf("tail(%d) = %q, want %q", n, got, want)
		}
	}
	if got := tail(p+".missing", 4); len(got) != 0 {
		t.Errorf("tail of a missing file = %q", got)
	}
}
