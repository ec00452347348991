// Package plumbing runs the plumbing commands of a step on behalf of the
// Go halves of runner-step (step-begin, step-end; DESIGN.md decision 12):
// a command's core in this process as a job whose typed value the step
// takes (Go), or, for the few that stay processes, the command again
// should SIGINT or SIGTERM kill it at its very start, before it could
// hold signals (Held: it had done nothing yet). A job's output is kept in
// memory until the step takes it, so jobs can run side by side and still
// be shown in sequence.
package plumbing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runlock"
	"github.com/treeloop/treeloop/lib/trace"
)

// Job is one command the step starts, its output kept until it is taken
// (Collect): the first that refuses ends the step as it would have in
// sequence, and what the later ones printed is not shown.
type Job struct {
	done           chan struct{}
	stdout, stderr bytes.Buffer
	code           int
}

// Spawn runs f in the background as a job writing to its buffers. A
// panic in f ends the job as a runner error (exit 6) with the panic and
// its stack on the job's stderr, as a command's crash would end it, and
// not the whole step with an exit code the step would misread.
func Spawn(f func(stdout, stderr io.Writer) int) *Job {
	j := &Job{done: make(chan struct{})}
	go func() {
		defer close(j.done)
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintf(&j.stderr, "%s: internal error: %v\n%s", filepath.Base(os.Args[0]), r, debug.Stack())
				j.code = exit.RunnerError
			}
		}()
		j.code = f(&j.stdout, &j.stderr)
	}()
	return j
}

// Typed is a job that runs a command's core in this process (Go): its
// exit code and output as any job's, and the value the core returned.
type Typed[T any] struct {
	*Job
	value T
}

// Value waits for the job and returns the core's value (its zero value
// when the core failed before it had one).
func (t *Typed[T]) Value() T {
	t.Wait()
	return t.value
}

// Done is a typed job that has ended with code and value, having
// printed stderr (what a test hands a step).
func Done[T any](code int, value T, stderr string) *Typed[T] {
	return &Typed[T]{Job: Ended(code, "", stderr), value: value}
}

// Go runs core, the work of the command name with its options set, in
// this process in the background as cli.Call runs it, on env's
// directory with the job's buffers as its writers: the step takes its
// typed value (Value), not its printed words. A panic ends the job as a
// runner error (exit 6), as the command's crash would.
func Go[T any](name string, env *cli.Env, core func(*cli.Env) (T, error)) *Typed[T] {
	t := &Typed[T]{}
	t.Job = Spawn(func(stdout, stderr io.Writer) int {
		e := *env
		e.Stdout, e.Stderr = stdout, stderr
		return cli.Call(name, &e, func(e *cli.Env) error {
			v, err := core(e)
			t.value = v
			return err
		})
	})
	return t
}

// Ended is a job that has ended with code, having printed stdout and
// stderr (what a test hands a step).
func Ended(code int, stdout, stderr string) *Job {
	j := &Job{done: make(chan struct{}), code: code}
	j.stdout.WriteString(stdout)
	j.stderr.WriteString(stderr)
	close(j.done)
	return j
}

// Wait waits for the job to end.
func (j *Job) Wait() { <-j.done }

// Peek waits for the job and returns its exit code and its stdout
// without the trailing newlines (as the shell's $(...) gives it), showing
// nothing.
func (j *Job) Peek() (int, string) {
	<-j.done
	return j.code, strings.TrimRight(j.stdout.String(), "\n")
}

// Collect is Peek that passes the job's stderr on to stderr, and with
// stdout != nil its stdout (a line, when it printed any).
func (j *Job) Collect(stdout, stderr io.Writer) (int, string) {
	code, out := j.Peek()
	if stdout != nil && out != "" {
		fmt.Fprintln(stdout, out)
	}
	stderr.Write(j.stderr.Bytes())
	return code, out
}

// Held runs argv with its output on stdout and stderr (one stream, in the
// order written, when they are the same writer), again should SIGINT or
// SIGTERM kill it at its very start, before it could hold signals (at
// most 10 times: it had done nothing yet), and returns its exit code
// (128+N killed by signal N, 127 when it cannot start).
func Held(stdout, stderr io.Writer, argv ...string) int {
	for try := 0; ; try++ {
		out, errb := &bytes.Buffer{}, &bytes.Buffer{}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = out, errb
		if stdout == stderr {
			cmd.Stderr = out
		}
		cmd.ExtraFiles = lockFiles
		if trace.On {
			t := time.Now()
			cmd.Env = append(os.Environ(), trace.LaunchEnv+"="+strconv.FormatInt(t.Unix(), 10)+"."+fmt.Sprintf("%06d", t.Nanosecond()/1000))
		}
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) && killedAtStart(ee) && try < 9 {
			continue
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
			fmt.Fprintf(stderr, "%s: %s: %v\n", filepath.Base(os.Args[0]), argv[0], err)
			return 127
		}
	}
}

// killedAtStart reports whether SIGINT or SIGTERM killed the command: one
// run with signals held dies of them only before it holds them.
func killedAtStart(ee *exec.ExitError) bool {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM)
}

// lockFiles hands the runner lock's descriptor on as runner-step does: a
// command of the step (tree-edit apply-answers) shares the step's hold.
var lockFiles = func() []*os.File {
	if !runlock.Shares(runlock.FD, layout.Lock) {
		return nil
	}
	files := make([]*os.File, runlock.FD-2)
	files[runlock.FD-3] = os.NewFile(runlock.FD, layout.Lock)
	return files
}()

// Facts are what a step's Go half learns, for runner-step: names and
// values, "exit" the step's exit code.
type Facts map[string]string

// Write prints the facts on descriptor fd as shell assignments for
// runner-step to eval, sorted by name, each value quoted, and
// exit=<code> last and bare (runner-step's session reads its exit there).
func (f Facts) Write(fd int) error {
	names := make([]string, 0, len(f))
	for k := range f {
		if k != "exit" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "%s=%s\n", k, cli.ShellQuote(f[k]))
	}
	fmt.Fprintf(&b, "exit=%s\n", f["exit"])
	// write(2) on the descriptor itself: an *os.File made for it would
	// close it when collected, and in a process that goes on (a test
	// running the command in process) the number may by then be another
	// file's.
	data := []byte(b.String())
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write the step's facts on descriptor %d: %w", fd, err)
		}
		data = data[n:]
	}
	return nil
}
