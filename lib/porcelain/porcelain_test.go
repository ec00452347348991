package porcelain

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The test binary doubles as a porcelain command: with
// PORCELAIN_TEST_SCRIPT set it runs Main on that script, with the helpers
// of PORCELAIN_TEST_SETUP.
func TestMain(m *testing.M) {
	if s, ok := os.LookupEnv("PORCELAIN_TEST_SCRIPT"); ok {
		setup := os.Getenv("PORCELAIN_TEST_SETUP")
		os.Unsetenv("PORCELAIN_TEST_SCRIPT")
		os.Unsetenv("PORCELAIN_TEST_SETUP")
		os.Exit(Main("porcelain-test", s, setup, os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}

// command is the test binary run as a porcelain command on script.
func command(script string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PORCELAIN_TEST_SCRIPT="+script)
	return cmd
}

// The script gets the arguments and the environment, reads itself again
// by $0 (as --help does), and its exit code is the command's.
func TestArgumentsExitAndSelf(t *testing.T) {
	script := "#!/usr/bin/env bash\n# first comment\nprintf '<%s>\\n' \"$@\"\necho \"env=$PORCELAIN_X\"\nsed -n 2p \"$0\"\nexit 42\n"
	cmd := command(script, "-C", "a dir", "--max-steps=3")
	cmd.Env = append(cmd.Env, "PORCELAIN_X=kept")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 42 {
		t.Fatalf("exit: %v", err)
	}
	if got, want := string(out), "<-C>\n<a dir>\n<--max-steps=3>\nenv=kept\n# first comment\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

// bash replaces the command: the same process id, so a signal sent to
// the command reaches the script's trap; the signals blocked and ignored
// are those of the script run by bash from a file.
func TestSameProcessAndSignals(t *testing.T) {
	// The signal state is read by bash's builtins alone: a grep would read
	// it while bash waits for grep, with the signals bash blocks around a
	// fork and a wait, which vary with timing.
	script := "trap 'echo got TERM; exit 143' TERM\necho \"pid=$$\"\nwhile IFS= read -r l; do case $l in SigBlk:*|SigIgn:*) echo \"$l\" ;; esac; done < /proc/$$/status\necho ready\nwhile :; do sleep 0.01; done\n"
	cmd := command(script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	var lines []string
	for {
		l, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the script ended before it was ready: %v %q", err, lines)
		}
		if l == "ready\n" {
			break
		}
		lines = append(lines, strings.TrimSpace(l))
	}
	if len(lines) != 3 || lines[0] != "pid="+strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("the script runs as another process: %q (pid %d)", lines, cmd.Process.Pid)
	}
	// The same script run by bash from a file, as the script by its path.
	file := filepath.Join(t.TempDir(), "script")
	os.WriteFile(file, []byte(strings.Replace(script, "echo ready\n", "exit 0\n", 1)), 0o755)
	direct, err := exec.Command("bash", file).Output()
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := strings.Cut(string(direct), "\n")
	if got := strings.Join(lines[1:], "\n") + "\n"; got != want {
		t.Errorf("signal state %q, the script run from a file has %q", got, want)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := r.ReadString('\n')
	err = cmd.Wait()
	var ee *exec.ExitError
	if rest != "got TERM\n" || !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Errorf("after SIGTERM: %q, %v", rest, err)
	}
}

// A descriptor the caller passes (runner-loop's lock, 9) reaches the
// script, the script's own is out of the way of those the scripts name,
// and the script cannot rewrite itself.
func TestDescriptorsAndSeal(t *testing.T) {
	lock := filepath.Join(t.TempDir(), "lock")
	f, err := os.Create(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	script := "readlink /proc/$$/fd/9\nif echo more >> \"$0\" 2>/dev/null; then echo rewritten; else echo sealed; fi\ncase $0 in /proc/self/fd/1[0-9][0-9]) echo high ;; *) echo \"$0\" ;; esac\n"
	cmd := command(script)
	// ExtraFiles[i] is descriptor 3+i: 9 is the seventh.
	cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, nil, nil, f}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), lock+"\nsealed\nhigh\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

// Without bash on PATH: one line, exit 6.
func TestNoBash(t *testing.T) {
	var stderr bytes.Buffer
	t.Setenv("PATH", t.TempDir())
	if code := Main("runner-step", "exit 0\n", "", nil, &stderr); code != 6 || stderr.String() != "runner-step: bash not found on PATH: install bash, which runs runner-step\n" {
		t.Errorf("exit %d, %q", code, stderr.String())
	}
}

// The script sources its helpers from the sealed memory file SetupEnv
// names, which it cannot rewrite either; the helpers' unset of the name
// keeps it from the commands the script starts.
func TestSetupSourced(t *testing.T) {
	setup := "greet() { echo \"hello from $1\"; }\nunset " + SetupEnv + "\n"
	script := "setup=$" + SetupEnv + "\n. \"$setup\"\ngreet script\nif echo more >> \"$setup\" 2>/dev/null; then echo rewritten; else echo sealed; fi\n" +
		"case $setup in /proc/self/fd/1[0-9][0-9]) echo high ;; *) echo \"$setup\" ;; esac\nbash -c 'echo \"child sees [${" + SetupEnv + "-}]\"'\n"
	cmd := command(script)
	cmd.Env = append(cmd.Env, "PORCELAIN_TEST_SETUP="+setup)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "hello from script\nsealed\nhigh\nchild sees []\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}
