// Package proc runs one external command (an agent CLI or the guard) as a
// fresh process in its own process group, under a deadline, an idle
// timeout and context cancellation, streaming its output into capped sinks
// with bounded memory (DESIGN.md decisions 6 and 12: a timeout or an
// interruption stops the whole process group).
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultGrace is the SIGTERM→SIGKILL grace used when Spec.Grace is zero.
const DefaultGrace = 5 * time.Second

// drainTimeout bounds how long Run keeps reading output once the process
// group is gone; only a descendant that left the group can hold the pipes
// open longer.
const drainTimeout = 2 * time.Second

// pollInterval is how often Run checks whether a stopping process group is
// empty, to end the grace period early.
const pollInterval = 50 * time.Millisecond

// Spec describes one command to run.
type Spec struct {
	// Argv is the command and its arguments; Argv[0] is looked up in PATH
	// unless it contains a slash.
	Argv []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Env is the whole environment as "key=value" entries; nil inherits
	// os.Environ(), an empty non-nil slice gives an empty environment.
	Env []string
	// Stdin feeds the process; nil reads from /dev/null. A reader that is
	// not an *os.File is copied through a pipe; if a Read on it blocks past
	// the end of the run, Run returns anyway and that copy ends after the
	// Read does.
	Stdin io.Reader
	// Log receives stdout and stderr interleaved in arrival order, usually
	// a *CappedWriter over the log file; may be nil. Run does not close it.
	Log io.Writer
	// Stdout, if set, additionally receives the raw stdout stream alone.
	// Without it stdout and stderr share one pipe, which keeps their
	// relative order exact; with it they are read from two pipes and
	// interleaved chunk by chunk as they arrive.
	Stdout io.Writer
	// Tee, if set, additionally receives everything Log receives (a live
	// view on a terminal).
	Tee io.Writer
	// Deadline is the absolute time at which the process group is stopped;
	// zero means none.
	Deadline time.Time
	// IdleTimeout stops the process group when neither stdout nor stderr
	// has produced a byte for that long; zero means off.
	IdleTimeout time.Duration
	// Grace is how long a stopping process group gets between SIGTERM and
	// SIGKILL; zero means DefaultGrace.
	Grace time.Duration
	// KillEscaped makes this process a child subreaper for the run and,
	// once the group is gone, kills every descendant still alive: those
	// that left the group with setsid or a double fork too. Set it only
	// where no other child runs concurrently (Run reaps all children).
	KillEscaped bool
	// Spared runs the command beside a run with KillEscaped (and without
	// KillEscaped itself): that run's sweep neither kills nor reaps its
	// process, which this run waits for. Its group's escapees are still
	// that sweep's, or KillStray's once both ended.
	Spared bool
	// Interrupt is the signal that stops the group when ctx is done, and
	// InterruptGrace the grace period it then has before SIGKILL; zero
	// means SIGTERM and Grace. (runner-loop records its iteration on
	// SIGINT, and may take longer than a timeout allows.)
	Interrupt      syscall.Signal
	InterruptGrace time.Duration
	// Kill, once closed, kills the group at once with SIGKILL, without a
	// grace period (a second interruption); nil means never. A run it
	// ends without another reason reports Canceled.
	Kill <-chan struct{}
	// DeadlineNote, if set, is written to Log and Tee when Deadline is
	// reached, before the group is signalled: a line saying why the
	// output that follows stops.
	DeadlineNote string
	// OwnNamespace says the command makes a PID namespace of its own
	// and is its init (bwrap --unshare-pid --die-with-parent): with
	// KillEscaped, it runs without the session init of contain.go, which
	// would give it a /proc that is not its namespace's.
	OwnNamespace bool
	// Restart, when set, makes descriptor 3 of the command a pipe for the
	// report a sandbox writes as it starts the command (bubblewrap's
	// --json-status-fd 3). Once the command has ended on its own (no
	// deadline, idle timeout or interruption), Restart is given that
	// report and the first RestartOutput bytes of the output; true says
	// the sandbox never ran the command (sandbox.NeverRan: a mount went
	// away while bubblewrap copied the file system's view), and Run starts
	// it again, at most MaxStarts times in all, saying so in Log and Tee.
	// Stdin is fed again from where it stood: a Stdin that cannot seek
	// back is not started again. Needs OwnNamespace where KillEscaped
	// is set (the sandbox is the command's init).
	Restart func(report, out []byte) bool
}

// MaxStarts bounds how many times Run starts a command whose sandbox
// never ran it (Spec.Restart).
const MaxStarts = 3

// RestartNote begins the line Run writes in Log and Tee before it starts
// a command again (Spec.Restart): what follows the last such line is the
// last start's output (LastStart).
const RestartNote = "[treeloop] the sandbox did not start the command"

// LastStart is the part of a run's log that its last start wrote: what
// follows the last RestartNote line, or the whole log when there is none.
func LastStart(log []byte) []byte {
	i := bytes.LastIndex(log, []byte(RestartNote))
	if i < 0 || i > 0 && log[i-1] != '\n' {
		return log
	}
	if j := bytes.IndexByte(log[i:], '\n'); j >= 0 {
		return log[i+j+1:]
	}
	return nil
}

// RestartOutput is how much of a run's output Spec.Restart is given.
const RestartOutput = 4 << 10

// Result describes how a run ended. At most one of TimedOut, Idle and
// Canceled is set: the reason Run stopped the process group, if it did.
type Result struct {
	// ExitCode is the process's exit status; -1 if it died by a signal or
	// never started.
	ExitCode int
	// Signal names the signal that ended the process ("killed",
	// "terminated"), empty if it exited.
	Signal string
	// TimedOut reports that Spec.Deadline, or a deadline on ctx, was reached.
	TimedOut bool
	// Idle reports that Spec.IdleTimeout elapsed without output.
	Idle bool
	// Canceled reports that ctx was canceled (an interruption).
	Canceled bool
	// Started is when Run decided to start the command (or its init),
	// just before its last look at ctx: an interruption noted after it
	// found the command starting and stopped it at once, one noted before
	// it started nothing. Zero when nothing started.
	Started time.Time
	// Duration is the wall time from start until the process exited and
	// its output was drained.
	Duration time.Duration
	// OutputBytes counts the bytes read from stdout and stderr together.
	OutputBytes int64
	// OutputErr is the first error writing to Log, Stdout or Tee, naming
	// the sink ("write log: ..."); the failing sink received nothing after
	// it, the others carried on and the process was not disturbed.
	OutputErr error
	// Escaped counts the descendants that outlived the group and were
	// killed (only with Spec.KillEscaped), and EscapedProcs says what
	// each was (under a session init, the first 64).
	Escaped      int
	EscapedProcs []Escaped
	// Contained reports that the command ran under its own init in a PID
	// namespace (Spec.KillEscaped where the kernel allows it).
	Contained bool
	// Starts counts the times the command was started: more than 1 when
	// its sandbox never ran it before (Spec.Restart).
	Starts int
	// sig is the signal that ended the process, 0 if it exited.
	sig syscall.Signal
}

// Status is the exit status as a shell reports it: the exit code, or
// 128+N when signal N ended the process; -1 when it never started.
func (r Result) Status() int {
	if r.sig != 0 {
		return 128 + int(r.sig)
	}
	return r.ExitCode
}

// StartError reports that the command could not be started: not found in
// PATH, not executable, or a bad working directory. It wraps the cause, so
// errors.Is(err, exec.ErrNotFound) and errors.Is(err, fs.ErrNotExist) work.
type StartError struct {
	Name string // Argv[0]
	Err  error
}

func (e *StartError) Error() string {
	cause := e.Err
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(cause, &ee) {
		cause = ee.Err // exec.Error repeats the name
	} else if errors.As(cause, &pe) && pe.Op == "fork/exec" {
		cause = pe.Err // "fork/exec <name>: ..." repeats it too
	}
	return "start " + strconv.Quote(e.Name) + ": " + cause.Error()
}

func (e *StartError) Unwrap() error { return e.Err }

// Run runs s.Argv to completion in a new process group and reports how it
// ended. On s.Deadline, on s.IdleTimeout without output, or when ctx is
// done, it sends SIGTERM (and SIGCONT) to the group, waits up to s.Grace
// for the group to empty, then sends SIGKILL. When the main process exits,
// whatever is left in its group is killed with SIGKILL, so background
// children do not survive it.
//
// The error is non-nil only when the process could not be started (a
// *StartError, or an empty Argv). A ctx already done or a deadline already
// past returns a Result with ExitCode -1 and the reason set, starting
// nothing.
func Run(ctx context.Context, s Spec) (Result, error) {
	if s.Restart == nil {
		res, err := runOnce(ctx, s, nil)
		if err == nil && res.Started != (time.Time{}) {
			res.Starts = 1
		}
		return res, err
	}
	if s.KillEscaped && !s.OwnNamespace {
		// The session init reports on descriptor 3 too (contain.go).
		return Result{ExitCode: -1}, errors.New("proc: Spec.Restart with KillEscaped needs OwnNamespace (the sandbox is the command's init)")
	}
	rewind := rewinder(s.Stdin)
	for n := 1; ; n++ {
		var st startReport
		res, err := runOnce(ctx, s, &st)
		if res.Started != (time.Time{}) {
			res.Starts = n
		}
		// Only a sandbox that failed as a program does (exit 1, as
		// bubblewrap's own errors end) and ended on its own is asked about.
		if err != nil || n == MaxStarts || !st.complete || res.ExitCode != 1 || res.sig != 0 ||
			res.TimedOut || res.Idle || res.Canceled ||
			!s.Restart(st.report.Bytes(), st.out.Bytes()) || !rewind() {
			return res, err
		}
		line := fmt.Sprintf("%s (%s): starting it again (%d of %d)", RestartNote, firstLine(st.out.Bytes()), n+1, MaxStarts)
		for _, w := range []io.Writer{s.Log, s.Tee} {
			if w != nil {
				w.Write([]byte(line + "\n"))
			}
		}
	}
}

// startReport is what a run under Spec.Restart gathered for it: the
// sandbox's report on descriptor 3, the first RestartOutput bytes of the
// output, and whether both were read whole and stdin's copy ended
// (complete), so that the command can be started again from the start.
type startReport struct {
	report, out bytes.Buffer
	reportErr   error
	complete    bool
}

// rewinder returns what sets in back to where it stands now, reporting
// whether it could: always for no input, never for an input that cannot
// seek (a pipe).
func rewinder(in io.Reader) func() bool {
	if in == nil {
		return func() bool { return true }
	}
	sk, ok := in.(io.Seeker)
	if !ok {
		return func() bool { return false }
	}
	at, err := sk.Seek(0, io.SeekCurrent)
	if err != nil {
		return func() bool { return false }
	}
	return func() bool {
		_, err := sk.Seek(at, io.SeekStart)
		return err == nil
	}
}

// firstLine is out's first line, trimmed.
func firstLine(out []byte) string {
	l, _, _ := bytes.Cut(bytes.TrimSpace(out), []byte("\n"))
	return string(bytes.TrimSpace(l))
}

// runOnce is one start of s.Argv (Run), gathering for Spec.Restart into st
// when s asks for it.
func runOnce(ctx context.Context, s Spec, st *startReport) (Result, error) {
	res := Result{ExitCode: -1}
	if len(s.Argv) == 0 {
		return res, errors.New("empty command")
	}
	grace := s.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	decided := time.Now()
	if err := ctx.Err(); err != nil {
		setCtxReason(&res, err)
		return res, nil
	}
	if !s.Deadline.IsZero() && !decided.Before(s.Deadline) {
		res.TimedOut = true
		return res, nil
	}
	cmd, p, status, err := start(s, &res, decided)
	if err != nil {
		return res, err
	}
	pgid := cmd.Process.Pid

	o := &output{log: s.Log, tee: s.Tee, stdout: s.Stdout}
	reported := make(chan struct{})
	if st != nil {
		o.head = &st.out
		go func() {
			defer close(reported)
			_, err := io.Copy(&st.report, io.LimitReader(p.repR, RestartOutput))
			st.reportErr = err
		}()
	} else {
		close(reported)
	}
	o.last.Store(res.Started.UnixNano())
	var readers sync.WaitGroup
	readers.Go(func() { o.copy(p.outR, s.Stdout != nil) })
	if p.errR != nil {
		readers.Go(func() { o.copy(p.errR, false) })
	}
	fed := make(chan struct{})
	if p.inW != nil {
		go func() {
			defer close(fed)
			io.Copy(p.inW, s.Stdin)
			p.inW.Close()
		}()
	} else {
		close(fed)
	}

	waitc := make(chan struct{})
	go func() {
		cmd.Wait()
		close(waitc)
	}()
	supervise(ctx, s, &supervisor{pgid: pgid, grace: grace}, waitc, o, &res)
	if s.KillEscaped && !res.Contained {
		res.EscapedProcs = killChildren(pgid)
		res.Escaped = len(res.EscapedProcs)
	}
	if s.Spared {
		sweeping.Lock()
		delete(spared, pgid)
		sweeping.Unlock()
	}
	if err := exitStatus(cmd, status, &res); err != nil {
		p.closeOurEnds()
		closeFiles(p.repR)
		return Result{ExitCode: -1}, &StartError{Name: s.Argv[0], Err: err}
	}
	whole := drain(p, &readers, fed)
	if st != nil {
		// The sandbox closed its end as it exited; a process it left
		// running could hold it, so the read is given up on in time.
		p.repR.SetReadDeadline(time.Now().Add(drainTimeout))
		<-reported
		p.repR.Close()
		st.complete = whole && st.reportErr == nil && o.bytes.Load() <= RestartOutput
		select {
		case <-fed:
		default:
			st.complete = false
		}
	}
	res.Duration = time.Since(res.Started)
	res.OutputBytes = o.bytes.Load()
	res.OutputErr = o.firstErr()
	return res, nil
}

// start starts s.Argv in a new process group (a session under its own
// init where s asks for it and the kernel allows, res.Contained), with
// the pipes of its output and input, and sets res.Started to started. status is the
// init's report pipe, nil without an init. The error is a *StartError.
func start(s Spec, res *Result, started time.Time) (cmd *exec.Cmd, p *pipes, status *os.File, err error) {
	// A bad Dir would otherwise surface as "fork/exec <binary>: no such
	// file or directory", blaming the binary.
	if err := checkDir(s.Dir); err != nil {
		return nil, nil, nil, &StartError{Name: s.Argv[0], Err: err}
	}
	cmd = exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	// Pdeathsig: if this process is killed outright, the child does not
	// run on unsupervised.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	CloseInherited()
	if s.KillEscaped {
		if err := becomeSubreaper(); err != nil {
			return nil, nil, nil, &StartError{Name: s.Argv[0], Err: fmt.Errorf("become a child subreaper: %w", err)}
		}
	}

	p, err = newPipes(cmd, s)
	if err != nil {
		return nil, nil, nil, &StartError{Name: s.Argv[0], Err: err}
	}
	if s.KillEscaped && !s.OwnNamespace {
		// A session: under its own init in a PID namespace (contain.go),
		// else, where the kernel refuses, as a child subreaper.
		var contained *exec.Cmd
		if contained, status = startContained(cmd, s); status != nil {
			cmd, res.Contained = contained, true
		}
	}
	if !res.Contained {
		if s.Spared {
			sweeping.Lock()
		}
		err := cmd.Start()
		if s.Spared {
			if err == nil {
				spared[cmd.Process.Pid] = true
			}
			sweeping.Unlock()
		}
		if err != nil {
			p.closeAll()
			return nil, nil, nil, &StartError{Name: s.Argv[0], Err: err}
		}
	}
	res.Started = started
	p.closeChildEnds()
	return cmd, p, status, nil
}

// supervise waits for the main process to exit (waitc closed), stopping
// its group on s.Deadline, on s.IdleTimeout without output (o) or when
// ctx is done (the reason goes into res), then ends the group (sup).
func supervise(ctx context.Context, s Spec, sup *supervisor, waitc <-chan struct{}, o *output, res *Result) {
	defer sup.stopTimers()
	var deadlinec <-chan time.Time
	if !s.Deadline.IsZero() {
		t := time.NewTimer(time.Until(s.Deadline))
		defer t.Stop()
		deadlinec = t.C
	}
	var idle *time.Timer
	var idlec <-chan time.Time
	if s.IdleTimeout > 0 {
		idle = time.NewTimer(s.IdleTimeout)
		defer idle.Stop()
		idlec = idle.C
	}
	sig, igrace := s.Interrupt, s.InterruptGrace
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	if igrace <= 0 {
		igrace = sup.grace
	}
	done, killc := ctx.Done(), s.Kill
wait:
	for {
		select {
		case <-waitc:
			break wait
		case <-done:
			done = nil
			if !sup.stopping {
				setCtxReason(res, ctx.Err())
				sup.stop(sig, igrace)
			}
		case <-killc:
			killc = nil
			if !sup.stopping && !sup.killed {
				res.Canceled = true
			}
			sup.kill()
		case <-deadlinec:
			deadlinec = nil
			if !sup.stopping {
				res.TimedOut = true
				if s.DeadlineNote != "" {
					o.note(s.DeadlineNote)
				}
				sup.stop(syscall.SIGTERM, sup.grace)
			}
		case <-idlec:
			since := time.Since(time.Unix(0, o.last.Load()))
			if since < s.IdleTimeout {
				idle.Reset(s.IdleTimeout - since)
				continue
			}
			idlec = nil
			if !sup.stopping {
				res.Idle = true
				sup.stop(syscall.SIGTERM, sup.grace)
			}
		case <-sup.gracec:
			sup.kill()
		}
	}
	sup.finish()
}

// exitStatus sets res's exit code and signal from the reaped process and,
// under an init, from its report on status (which it closes), with what
// the init killed. The error is the init's report that the command could
// not be started.
func exitStatus(cmd *exec.Cmd, status *os.File, res *Result) error {
	st := cmd.ProcessState
	if st != nil {
		res.ExitCode = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.sig = ws.Signal()
			res.Signal = res.sig.String()
		}
	}
	if status == nil {
		return nil
	}
	// The init exits as the command did; its report says whether
	// the command died by a signal, which its own exit cannot.
	rep := initStatus(status)
	status.Close()
	res.EscapedProcs, res.Escaped = rep.escaped, max(rep.count, len(rep.escaped))
	switch {
	case rep.startErr != "":
		return errors.New(rep.startErr)
	case rep.sig != 0 && res.Signal == "":
		res.ExitCode, res.sig, res.Signal = -1, rep.sig, rep.sig.String()
	case rep.code >= 0 && res.Signal == "":
		res.ExitCode = rep.code
	}
	return nil
}

// drain waits for the output's readers and the input's copy (fed) to end
// once the group is gone, giving up on each after drainTimeout. It
// reports whether the output was read to its end.
func drain(p *pipes, readers *sync.WaitGroup, fed <-chan struct{}) (whole bool) {
	// The group is gone; what is left in the pipes drains quickly unless a
	// descendant escaped the group and still holds them.
	drained := make(chan struct{})
	go func() {
		readers.Wait()
		close(drained)
	}()
	whole = true
	select {
	case <-drained:
	case <-time.After(drainTimeout):
		p.abort()
		<-drained
		whole = false
	}
	// Nobody reads stdin any more: a pending write fails at once, and a
	// Stdin read that blocks is given up on (the copy ends after it).
	p.closeOurEnds()
	select {
	case <-fed:
	case <-time.After(drainTimeout):
	}
	return whole
}

func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return &fs.PathError{Op: "chdir", Path: dir, Err: errors.Unwrap(err)}
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "chdir", Path: dir, Err: syscall.ENOTDIR}
	}
	return nil
}

func setCtxReason(res *Result, err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		res.TimedOut = true
	} else {
		res.Canceled = true
	}
}

// supervisor stops a process group: SIGTERM, a grace period, SIGKILL.
type supervisor struct {
	pgid     int
	grace    time.Duration
	stopping bool
	killed   bool
	gracet   *time.Timer
	gracec   <-chan time.Time
}

// stop sends sig to the group, and SIGCONT so that stopped members see
// it, and starts the grace period.
func (s *supervisor) stop(sig syscall.Signal, grace time.Duration) {
	s.stopping = true
	syscall.Kill(-s.pgid, sig)
	syscall.Kill(-s.pgid, syscall.SIGCONT)
	s.gracet = time.NewTimer(grace)
	s.gracec = s.gracet.C
}

func (s *supervisor) kill() {
	syscall.Kill(-s.pgid, syscall.SIGKILL)
	s.killed = true
	s.gracec = nil
}

// finish runs once the main process has been reaped. A stopping group
// keeps the rest of its grace period to exit, ended early once the group
// is empty; then whatever is left is killed.
func (s *supervisor) finish() {
	if s.stopping && !s.killed {
		tick := time.NewTicker(pollInterval)
		defer tick.Stop()
	poll:
		for groupAlive(s.pgid) {
			select {
			case <-s.gracec:
				break poll
			case <-tick.C:
			}
		}
	}
	s.kill()
}

func (s *supervisor) stopTimers() {
	if s.gracet != nil {
		s.gracet.Stop()
	}
}

// groupAlive reports whether the process group still has a live member.
// Zombies do not count: an orphan that died waits for PID 1 to reap it,
// which in a container may never happen. Where /proc cannot be read, any
// member counts.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		data, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if state, pg, ok := parseStat(data); ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// parseStat returns the state and process group from the text of
// /proc/<pid>/stat: "pid (comm) state ppid pgrp ...", where comm may hold
// spaces and parentheses.
func parseStat(data []byte) (state byte, pgrp int, ok bool) {
	state, _, pgrp, ok = parseStatFields(data)
	return state, pgrp, ok
}

// parseStatFields returns the state, parent and process group from the
// text of /proc/<pid>/stat.
func parseStatFields(data []byte) (state byte, ppid, pgrp int, ok bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	pp, err1 := strconv.Atoi(f[1])
	pg, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], pp, pg, true
}

// pipes holds the descriptors between Run and the child. The child ends
// are closed in the parent once the child has started.
type pipes struct {
	outR, outW *os.File // stdout, and stderr too when errR is nil
	errR, errW *os.File
	inR, inW   *os.File // only for a Stdin that is not an *os.File
	repR, repW *os.File // descriptor 3, only with Spec.Restart
}

func newPipes(cmd *exec.Cmd, s Spec) (p *pipes, err error) {
	p = &pipes{}
	defer func() {
		if err != nil {
			p.closeAll()
		}
	}()
	if p.outR, p.outW, err = os.Pipe(); err != nil {
		return p, err
	}
	cmd.Stdout, cmd.Stderr = p.outW, p.outW
	if s.Stdout != nil {
		if p.errR, p.errW, err = os.Pipe(); err != nil {
			return p, err
		}
		cmd.Stderr = p.errW
	}
	if s.Restart != nil {
		if p.repR, p.repW, err = os.Pipe(); err != nil {
			return p, err
		}
		cmd.ExtraFiles = []*os.File{p.repW}
	}
	switch in := s.Stdin.(type) {
	case nil:
	case *os.File:
		cmd.Stdin = in
	default:
		if p.inR, p.inW, err = os.Pipe(); err != nil {
			return p, err
		}
		cmd.Stdin = p.inR
	}
	return p, nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeChildEnds() { closeFiles(p.outW, p.errW, p.inR, p.repW) }
func (p *pipes) closeOurEnds()   { closeFiles(p.outR, p.errR, p.inW) }
func (p *pipes) closeAll()       { p.closeChildEnds(); p.closeOurEnds(); closeFiles(p.repR) }

// abort unblocks the goroutines still reading output.
func (p *pipes) abort() {
	for _, f := range []*os.File{p.outR, p.errR} {
		if f != nil {
			f.SetReadDeadline(time.Now())
		}
	}
}

// output fans the process's output out to the sinks, one chunk at a time
// under one lock, so Log and Tee see the same arrival order.
type output struct {
	mu     sync.Mutex
	log    io.Writer
	tee    io.Writer
	stdout io.Writer
	errs   [3]error // per sink: log, tee, stdout
	first  error    // the first of errs to happen, naming its sink
	last   atomic.Int64
	bytes  atomic.Int64
	head   *bytes.Buffer // the first RestartOutput bytes, for Spec.Restart; nil: none kept
}

func (o *output) copy(r io.Reader, isStdout bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			o.last.Store(time.Now().UnixNano())
			o.bytes.Add(int64(n))
			o.write(buf[:n], isStdout)
		}
		if err != nil {
			return
		}
	}
}

func (o *output) write(p []byte, isStdout bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.head != nil && o.head.Len() < RestartOutput {
		o.head.Write(p[:min(len(p), RestartOutput-o.head.Len())])
	}
	o.send(0, o.log, p)
	o.send(1, o.tee, p)
	if isStdout {
		o.send(2, o.stdout, p)
	}
}

var sinkNames = [3]string{"log", "tee", "stdout"}

func (o *output) send(i int, w io.Writer, p []byte) {
	if w == nil || o.errs[i] != nil {
		return
	}
	if _, err := w.Write(p); err != nil {
		o.errs[i] = err
		if o.first == nil {
			o.first = fmt.Errorf("write %s: %w", sinkNames[i], err)
		}
	}
}

// note writes a line of this process's own to Log and Tee, between two
// chunks of output.
func (o *output) note(line string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := []byte(line + "\n")
	o.send(0, o.log, p)
	o.send(1, o.tee, p)
}

func (o *output) firstErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.first
}

var closeInheritedOnce sync.Once

// CloseInherited marks, once per process, every descriptor above stderr
// close-on-exec, so no process this one starts (an agent, a guard, git and
// whatever git detaches, such as `git gc --auto`) inherits what this
// process inherited, such as runner-step's .runner/lock: a survivor
// holding it would refuse the next step. Every command calls it first
// (lib/cli.Run).
func CloseInherited() { closeInheritedOnce.Do(closeInherited) }

func closeInherited() {
	// One close_range(2) call (Linux 5.11) where the kernel has it,
	// rather than listing /proc/self/fd at every command's start (issue
	// 16); the descriptors the Go runtime opened are close-on-exec already.
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	closeListed("/proc/self/fd")
}

// closeListed marks close-on-exec every descriptor above stderr that dir
// (this process's /proc/self/fd) lists: CloseInherited where the kernel
// has no close_range(2).
func closeListed(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
