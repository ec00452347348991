// Command subreaper runs a command as the child subreaper of everything
// it starts (prctl PR_SET_CHILD_SUBREAPER): a process that outlives its
// parent (a browser's helpers, a daemonized server) is reparented to
// subreaper rather than to init, and reaped by it, so that the kernel's
// process accounting names it under the command and getrusage counts its
// CPU with the command's. Once the command has ended it reaps the
// processes left over, waiting for them at most -linger, and says on
// stderr how many were still running then (they are left as they are).
// It exits as the command did. Used by bench/suite-cpu.sh.
//
// Usage: subreaper [-linger DURATION] COMMAND [ARG...]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	linger := flag.Duration("linger", 30*time.Second, "how long to wait for the processes the command left running")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: subreaper [-linger DURATION] COMMAND [ARG...]")
		os.Exit(2)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "subreaper: %v\n", err)
		os.Exit(1)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			fmt.Fprintf(os.Stderr, "subreaper: %v\n", err)
			os.Exit(1)
		}
		code = ee.ExitCode()
		if code < 0 {
			code = 128 + int(ee.Sys().(unix.WaitStatus).Signal())
		}
	}
	if left := reap(*linger); left > 0 {
		fmt.Fprintf(os.Stderr, "subreaper: %d processes the command left were still running after %s\n", left, *linger)
	}
	os.Exit(code)
}

// reap waits for the processes reparented here, polling, until none is
// left (0) or linger has passed (how many are still running then).
func reap(linger time.Duration) int {
	deadline := time.Now().Add(linger)
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.ECHILD):
			return 0
		case err != nil && !errors.Is(err, unix.EINTR):
			return -1
		case pid > 0:
			continue
		}
		if time.Now().After(deadline) {
			return children()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// children counts the processes whose parent is this one.
func children() int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	n, self := 0, os.Getpid()
	for _, e := range ents {
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		var ppid int
		for i := len(data) - 1; i >= 0; i-- {
			if data[i] == ')' {
				var state string
				if _, err := fmt.Sscanf(string(data[i+1:]), " %s %d", &state, &ppid); err == nil && ppid == self {
					n++
				}
				break
			}
		}
	}
	return n
}
