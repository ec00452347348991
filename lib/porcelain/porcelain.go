// Package porcelain runs runner-step and runner-loop, bash scripts
// (tools/, embedded by package tools), as commands of their own, so that
// `go install …/cmd/...` installs them beside the plumbing they compose
// (DESIGN.md "The commands"). Main replaces the command's process with
// bash running the script: the same process id, signals, exit codes,
// environment and descriptors (the runner lock's descriptor 9, inherited
// from runner-loop, included) as the script run by its own path. The
// script is read from a sealed memory file (memfd), never from a path that
// a session could rewrite between two steps.
package porcelain

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/treeloop/treeloop/lib/exit"
)

// SetupEnv names, for the script, the sealed memory file holding the
// helpers it sources (tools/treeloop-sh-setup); the helpers unset it.
const SetupEnv = "TREELOOP_SH_SETUP"

// Main execs bash on script as command name with args, the helpers the
// script sources (setup) sealed beside it and named by SetupEnv; it
// returns only when that fails: exit.RunnerError, one line on stderr.
func Main(name, script, setup string, args []string, stderr io.Writer) int {
	bash, err := exec.LookPath("bash")
	if err != nil {
		fmt.Fprintf(stderr, "%s: bash not found on PATH: install bash, which runs %s\n", name, name)
		return exit.RunnerError
	}
	fd, err := Sealed(name, script)
	if err != nil {
		fmt.Fprintf(stderr, "%s: hold the script in memory: %v\n", name, err)
		return exit.RunnerError
	}
	setupFD, err := Sealed(name+"-sh-setup", setup)
	if err != nil {
		fmt.Fprintf(stderr, "%s: hold the script's helpers in memory: %v\n", name, err)
		return exit.RunnerError
	}
	// bash opens the script by this path and reads it as a script file:
	// $0 is the path, which the script's --help reads again.
	argv := append([]string{name, "/proc/self/fd/" + strconv.Itoa(fd)}, args...)
	env := append(os.Environ(), SetupEnv+"=/proc/self/fd/"+strconv.Itoa(setupFD))
	err = syscall.Exec(bash, argv, env)
	fmt.Fprintf(stderr, "%s: run %s: %v\n", name, bash, err)
	return exit.RunnerError
}

// Sealed is a memory file holding script, sealed against any change, on a
// descriptor that an exec keeps open.
func Sealed(name, script string) (int, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, err
	}
	for b := []byte(script); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
		b = b[n:]
	}
	const seals = unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		unix.Close(fd)
		return -1, err
	}
	// Out of the way of the descriptors the scripts name (3 for a
	// command's facts, 9 for the runner lock).
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD, highFD)
	unix.Close(fd)
	if err != nil {
		return -1, err
	}
	return high, nil
}

// highFD is the lowest descriptor Sealed puts the script on.
const highFD = 100
