package stepbegin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runlock"
	"github.com/treeloop/treeloop/lib/trace"
)

// job is one command the step starts, its output kept until it is taken
// (collect): the first that refuses ends the step as it would have in
// sequence, and what the later ones printed is not shown.
type job struct {
	done           chan struct{}
	stdout, stderr bytes.Buffer
	code           int
}

// start runs argv in the background.
func start(argv ...string) *job {
	j := &job{done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.code = held(&j.stdout, &j.stderr, argv...)
	}()
	return j
}

// spawn runs f in the background as a job writing to its buffers.
func spawn(f func(stdout, stderr io.Writer) int) *job {
	j := &job{done: make(chan struct{})}
	go func() {
		defer close(j.done)
		j.code = f(&j.stdout, &j.stderr)
	}()
	return j
}

// peek waits for the job and returns its exit code and its stdout
// without the trailing newlines (as the shell's $(...) gives it), showing
// nothing.
func (j *job) peek() (int, string) {
	<-j.done
	return j.code, strings.TrimRight(j.stdout.String(), "\n")
}

// collect is peek that passes the job's stderr on to stderr, and with
// stdout != nil its stdout (a line, when it printed any).
func (j *job) collect(stdout, stderr io.Writer) (int, string) {
	code, out := j.peek()
	if stdout != nil && out != "" {
		fmt.Fprintln(stdout, out)
	}
	stderr.Write(j.stderr.Bytes())
	return code, out
}

// held runs argv with its output on stdout and stderr, again should a
// signal kill it at its very start, before it could hold signals (at most
// 10 times: it had done nothing yet), and returns its exit code (127 when
// it cannot start).
func held(stdout, stderr io.Writer, argv ...string) int {
	for try := 0; ; try++ {
		out, errb := &bytes.Buffer{}, &bytes.Buffer{}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = out, errb
		cmd.ExtraFiles = lockFiles
		if os.Getenv(trace.Env) == "1" {
			t := time.Now()
			cmd.Env = append(os.Environ(), trace.LaunchEnv+"="+strconv.FormatInt(t.Unix(), 10)+"."+fmt.Sprintf("%06d", t.Nanosecond()/1000))
		}
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() &&
				(ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM) && try < 9 {
				continue
			}
		}
		stdout.Write(out.Bytes())
		stderr.Write(errb.Bytes())
		switch {
		case err == nil:
			return exit.OK
		case ee != nil && ee.Exited():
			return ee.ExitCode()
		case ee != nil:
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return exit.RunnerError
		default:
			fmt.Fprintf(stderr, "step-begin: %s: %v\n", argv[0], err)
			return 127
		}
	}
}

// lockFiles hands the runner lock's descriptor on as runner-step did: a
// command of the step (tree-edit apply-answers) shares the step's hold.
var lockFiles = func() []*os.File {
	if !runlock.Shares(runlock.FD, layout.Lock) {
		return nil
	}
	files := make([]*os.File, runlock.FD-2)
	files[runlock.FD-3] = os.NewFile(runlock.FD, layout.Lock)
	return files
}()

// fields reads "k=v k=v" words (as the commands print them) into a map.
func fields(s string) map[string]string {
	m := map[string]string{}
	for _, w := range strings.Fields(s) {
		if k, v, ok := strings.Cut(w, "="); ok {
			m[k] = v
		}
	}
	return m
}
