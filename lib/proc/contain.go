package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Containment (DESIGN.md decision 21): a session (Spec.KillEscaped) runs
// under an init of its own in a new PID namespace, a copy of this
// executable started as InitName. Inside the namespace the init is PID 1,
// which no process there can kill (the kernel drops SIGKILL and SIGSTOP
// sent to a namespace's init from inside it, and every other signal it
// handles); nothing inside can name a process outside (a PID namespace
// shows only its own). The init starts the command in its own process
// group, forwards the signals it gets to the command, reaps whatever is
// orphaned there, and once the command has exited kills
// everything left and exits with the command's status. When the init
// dies, by any cause (the parent's Pdeathsig when the runner is killed,
// SIGKILL to its group at the end of a grace period), the kernel kills
// every process of the namespace: no process a session starts outlives
// it, whatever its environment, session or process group. Not root, the
// namespace comes with a user namespace mapping the caller's ids to
// themselves. Where the kernel refuses them, Run falls back to being a
// child subreaper (Result.Contained false; runner-check says so).

// InitName is argv[0] of a session's init; argv[1] is the session's tag
// (its iteration directory, else its working directory), which
// LiveSessions looks for; argv[2] is "--", argv[3] the command's
// executable and argv[4:] the command's own argv.
const InitName = "treeloop-session-init"

// statusFD is the descriptor on which the init reports how the command
// ended ("exit N", "signal N") and the processes it killed that had left
// the command's process group ("escaped-count N", then the first
// maxNamed as "escaped PID PPID COMMAND", initStatus).
const statusFD = 3

// maxNamed bounds the escaped processes the init names: with Command's 200
// bytes each, the report fits in a pipe's buffer.
const maxNamed = 64

func init() {
	if len(os.Args) > 4 && os.Args[0] == InitName && os.Args[2] == "--" {
		os.Exit(runInit(os.Args[3], os.Args[4:]))
	}
}

// runInit is the init's whole life (see Containment); it returns its exit
// status.
func runInit(exe string, argv []string) int {
	status := os.NewFile(statusFD, "status")
	syscall.CloseOnExec(statusFD)
	// kill(-1, …) reaches every process of the caller's PID namespace
	// but itself: only the namespace's own init (PID 1) may send it.
	// Started any other way (by hand, under this name), this program
	// only runs the command and signals nothing but it.
	isInit := os.Getpid() == 1
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT)
	p, err := os.StartProcess(exe, argv, &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}, Env: os.Environ()})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "fork/exec <exe>: …" would name the command twice
		}
		fmt.Fprintf(status, "start %s\n", err)
		return 127
	}
	// A signal the init gets goes on to the command. (A signal to the
	// session's process group reaches the command itself; what left the
	// group is killed, and counted, when the command has ended.)
	go func() {
		for s := range sigs {
			syscall.Kill(p.Pid, s.(syscall.Signal))
		}
	}()
	var ws syscall.WaitStatus
	wait := -1 // the init reaps every orphan of the namespace
	if !isInit {
		wait = p.Pid
	}
	for {
		pid, err := syscall.Wait4(wait, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid == p.Pid {
			break
		}
	}
	if isInit {
		escaped := escapedInNamespace()
		fmt.Fprintf(status, "escaped-count %d\n", len(escaped))
		for i, e := range escaped {
			if i == maxNamed {
				break // the pipe's buffer holds them all: the init never waits on it
			}
			fmt.Fprintf(status, "escaped %d %d %s\n", e.PID, e.PPID, strings.Join(strings.Fields(e.Command), " "))
		}
		syscall.Kill(-1, syscall.SIGKILL)
		for {
			var rest syscall.WaitStatus
			if _, err := syscall.Wait4(-1, &rest, 0, nil); errors.Is(err, syscall.ECHILD) || err != nil && !errors.Is(err, syscall.EINTR) {
				break
			}
		}
	}
	if ws.Signaled() {
		fmt.Fprintf(status, "signal %d\n", int(ws.Signal()))
		return 128 + int(ws.Signal())
	}
	fmt.Fprintf(status, "exit %d\n", ws.ExitStatus())
	return ws.ExitStatus()
}

// escapedInNamespace lists the live processes of the init's namespace
// outside its process group (the command's): those that left it with
// setsid or setpgid, each with its parent and command line as they are
// before the init kills them. /proc is the parent namespace's, so every
// process is listed there (by its pid there), and its ns/pid link names
// its namespace.
func escapedInNamespace() []Escaped {
	if os.Getpid() != 1 {
		return nil
	}
	if err := syscall.Kill(-1, 0); errors.Is(err, syscall.ESRCH) {
		return nil // nothing left but the init
	}
	self, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return nil
	}
	me, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil
	}
	_, _, group, _ := parseStatFields(me)
	var escaped []Escaped
	eachProcess(func(pid int, stat []byte) {
		state, ppid, pgrp, ok := parseStatFields(stat)
		if !ok || pgrp == group || state == 'Z' || state == 'X' {
			return
		}
		if ns, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid"); err == nil && ns == self {
			escaped = append(escaped, Escaped{PID: pid, PPID: ppid, Command: Command(pid)})
		}
	})
	return escaped
}

// containAttr is the SysProcAttr of a session's init: a new PID namespace
// (and user namespace when not root), its own process group, killed with
// its parent.
func containAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: syscall.CLONE_NEWPID}
	if uid := os.Getuid(); uid != 0 {
		gid := os.Getgid()
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

var (
	containOnce sync.Once
	containErr  error
)

// Containment reports whether sessions run in a PID namespace here, by
// starting one init around `true` once per process; the error says why not.
// It starts a process, so runner-check, which runs before every step, gives
// ContainmentHint instead (the kernel's settings alone).
func Containment() error {
	containOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			containErr = err
			return
		}
		if _, err := os.Stat("/bin/true"); err != nil {
			containErr = err
			return
		}
		r, w, err := os.Pipe()
		if err != nil {
			containErr = err
			return
		}
		defer r.Close()
		p, err := os.StartProcess(exe, []string{InitName, "probe", "--", "/bin/true", "true"}, &os.ProcAttr{
			Files: []*os.File{nil, nil, nil, w},
			Sys:   containAttr(),
		})
		w.Close()
		if err != nil {
			containErr = err
			return
		}
		st, err := p.Wait()
		if err == nil && !st.Success() {
			err = fmt.Errorf("the namespace's init ended with %v", st)
		}
		containErr = err
	})
	return containErr
}

// initReport is how the init says the command ended: its exit code (-1
// when unknown) or signal, how many processes it killed that had left the
// command's process group and the first of them, and why the command
// could not start.
type initReport struct {
	code     int
	sig      syscall.Signal
	count    int
	escaped  []Escaped
	startErr string
}

// initStatus reads the init's report from r: "exit N", "signal N",
// "escaped-count N", "escaped PID PPID COMMAND" (one line each), "start
// ERROR".
func initStatus(r *os.File) initReport {
	rep := initReport{code: -1}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		word, rest, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.Atoi(rest)
		switch word {
		case "exit":
			rep.code = n
		case "signal":
			rep.sig = syscall.Signal(n)
		case "escaped-count":
			rep.count = n
		case "escaped":
			f := strings.SplitN(rest, " ", 3)
			if len(f) == 3 {
				pid, _ := strconv.Atoi(f[0])
				ppid, _ := strconv.Atoi(f[1])
				rep.escaped = append(rep.escaped, Escaped{PID: pid, PPID: ppid, Command: f[2]})
			}
		case "start":
			rep.startErr = rest
		}
	}
	return rep
}

// LiveSessions lists the inits of sessions still alive whose tag lies
// under root (a repository), as "pid <n>: <command> (session of <tag>)":
// a session of an earlier iteration that is still running, which the
// next iteration must not start beside. Without any, it lists the
// processes whose environment names an iteration directory under root
// (RUNNER_ITER_DIR), as a session without a namespace leaves them.
func LiveSessions(root string) []string {
	var live, tagged []string
	root = strings.TrimSuffix(root, "/")
	eachPID(func(pid int) {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return
		}
		args := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
		if len(args) < 5 || args[0] != InitName || args[2] != "--" {
			// Without a namespace (the fallback), a session's
			// processes carry its iteration directory in their
			// environment, unless they cleared it.
			if dir, ok := iterTag(pid); ok && pid != os.Getpid() && (dir == root || strings.HasPrefix(dir, root+"/")) {
				tagged = append(tagged, fmt.Sprintf("pid %d: %s (session of %s)", pid, strings.Join(args, " "), dir))
			}
			return
		}
		if args[1] != root && !strings.HasPrefix(args[1], root+"/") {
			return
		}
		live = append(live, fmt.Sprintf("pid %d: %s (session of %s)", pid, strings.Join(args[4:], " "), args[1]))
	})
	if len(live) == 0 {
		return tagged // processes of a session that ran without a namespace
	}
	return live
}

// KillSessions SIGKILLs the inits of live sessions tagged tag exactly
// (their namespaces die with them) and returns how many.
func KillSessions(tag string) int {
	n := 0
	eachPID(func(pid int) {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			return
		}
		args := strings.Split(string(data), "\x00")
		if len(args) >= 3 && args[0] == InitName && args[1] == tag && syscall.Kill(pid, syscall.SIGKILL) == nil {
			n++
		}
	})
	return n
}

// startContained starts cmd (built, its pipes set, not started) under a
// session init in a new PID namespace, as a new command with the same
// working directory, environment and descriptors, and returns it with the
// read end of the init's status pipe; a nil status when the kernel
// refused (cmd is then still unstarted, for the caller to start plainly).
func startContained(cmd *exec.Cmd, s Spec) (*exec.Cmd, *os.File) {
	if cmd.Err != nil {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, nil
	}
	tag := s.Dir
	for _, kv := range cmd.Environ() {
		if v, ok := strings.CutPrefix(kv, "RUNNER_ITER_DIR="); ok && v != "" {
			tag = v
		}
	}
	if tag == "" {
		tag, _ = os.Getwd()
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil
	}
	c := &exec.Cmd{
		Path: exe, Args: append([]string{InitName, tag, "--", cmd.Path}, cmd.Args...),
		Dir: cmd.Dir, Env: cmd.Env, Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr,
		ExtraFiles: []*os.File{w}, SysProcAttr: containAttr(),
	}
	err = c.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, nil
	}
	return c, r
}

// ContainmentHint is why sessions here would likely run without a PID
// namespace, "" when nothing says so, from the kernel's settings alone
// (no process started: runner-check runs before every step): not root,
// and unprivileged user namespaces are off, or AppArmor keeps an
// unconfined program from using one (Ubuntu 23.10 and later by default:
// the namespace is made, but without the capabilities a PID namespace
// needs).
func ContainmentHint() string { return containmentHint(os.Getuid(), os.ReadFile) }

// containmentHint is ContainmentHint for user uid, reading the kernel's
// settings with read.
func containmentHint(uid int, read func(string) ([]byte, error)) string {
	if uid == 0 {
		return ""
	}
	for _, s := range []struct{ path, name, off string }{
		{"/proc/sys/kernel/unprivileged_userns_clone", "kernel.unprivileged_userns_clone", "0"},
		{"/proc/sys/user/max_user_namespaces", "user.max_user_namespaces", "0"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "kernel.apparmor_restrict_unprivileged_userns", "1"},
	} {
		if data, err := read(s.path); err == nil && strings.TrimSpace(string(data)) == s.off {
			return s.name + " = " + s.off
		}
	}
	return ""
}

// iterTag is RUNNER_ITER_DIR in the environment of process pid.
func iterTag(pid int) (string, bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	// The first entry so named, as a split at each NUL would find it.
	const key = "RUNNER_ITER_DIR="
	for rest := env; len(rest) > 0; {
		entry, after, _ := bytes.Cut(rest, []byte{0})
		if v, ok := bytes.CutPrefix(entry, []byte(key)); ok {
			return string(v), true
		}
		rest = after
	}
	return "", false
}
