// Package trace prints, when RUNNER_TRACE=1, one line per command on stderr
// with its wall time measured from the process's start (so the Go runtime's
// and every linked package's initialisation count), and one line per git
// invocation. bench/step-bench.sh sums these lines into the per-command
// breakdown of a step (issue 16).
//
// Line shapes (stderr, only when tracing):
//
//	trace: cmd=<name> ms=<wall since process start> exit=<code>
//	trace: git=<subcommand> ms=<wall of the git process> by=<name>
//
// The process start is /proc/self/stat's starttime, in clock ticks (10 ms
// on Linux); the command's ms is therefore rounded towards more by up to
// one tick. A git line's ms is measured around the child, to the µs.
package trace

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Env is the variable that turns tracing on ("1").
const Env = "RUNNER_TRACE"

// On reports whether tracing is on for this process.
var On = os.Getenv(Env) == "1"

// name is the command name for git lines, set by Command.
var name = "?"

// SetName names the command the git lines are attributed to.
func SetName(n string) { name = n }

// SinceStart is the wall time since the process started, from
// /proc/self/stat's starttime and CLOCK_BOOTTIME (the clock starttime is
// counted on). ok is false where /proc is not available.
func SinceStart() (d time.Duration, ok bool) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields after its closing parenthesis. starttime is field 22.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, false
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return 0, false
	}
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0, false
	}
	const tick = 10 * time.Millisecond // sysconf(_SC_CLK_TCK) = 100 on Linux
	return time.Duration(ts.Nano()) - time.Duration(ticks)*tick, true
}

// Command prints the command's line (tracing on only).
func Command(w io.Writer, cmd string, code int) {
	if !On {
		return
	}
	if d, ok := SinceStart(); ok {
		fmt.Fprintf(w, "trace: cmd=%s ms=%.1f exit=%d\n", cmd, float64(d)/1e6, code)
	}
}

// Git prints one git invocation's line (tracing on only).
func Git(sub string, d time.Duration) {
	if On {
		fmt.Fprintf(os.Stderr, "trace: git=%s ms=%.1f by=%s\n", sub, float64(d)/1e6, name)
	}
}
