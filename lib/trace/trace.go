// Package trace prints, when RUNNER_TRACE=1, one line per command on stderr
// with its wall time measured from the process's start (so the Go runtime's
// and every linked package's initialisation count), and one line per git
// invocation. bench/step-bench.sh sums these lines into the per-command
// breakdown of a step.
//
// Line shapes (stderr, only when tracing):
//
//	trace: cmd=<name> ms=<wall since process start> exit=<code>
//	trace: cmd=<name> ms=<wall of the call> exit=<code> in=<process>   (a command called in process, cli.Call)
//	trace: git=<subcommand> ms=<wall of the git process> by=<name>
//
// The process start is when its launcher started it, from LaunchEnv
// (runner-step sets it for each command it runs while tracing), to the µs.
// Without it, or when it does not fall within the start /proc gives, the
// start is /proc/self/stat's starttime, in clock ticks (USER_HZ, a hundred a second on Linux):
// the command's ms is then rounded towards more by up to one tick. A git
// line's ms is measured around the child, to the µs.
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

// LaunchEnv is the variable a launcher sets, while tracing, to the wall
// clock time it starts the command at: Unix seconds with a fractional
// part, as bash's EPOCHREALTIME prints it ("1795455600.123456"). The
// command takes it out of its environment, so nothing it runs inherits it.
const LaunchEnv = "RUNNER_TRACE_T0"

// name is the command name for git lines, set by Command.
var name = "?"

// SetName names the command the git lines are attributed to.
func SetName(n string) { name = n }

// launched is LaunchEnv's time, zero when unset or not a time.
var launched = func() time.Time {
	v, ok := os.LookupEnv(LaunchEnv)
	if !ok {
		return time.Time{}
	}
	os.Unsetenv(LaunchEnv)
	return parseLaunch(v)
}()

// parseLaunch reads LaunchEnv's value ("<seconds>[.<fraction>]"), zero
// when it is not one.
func parseLaunch(v string) time.Time {
	sec, frac, _ := strings.Cut(v, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil || s <= 0 || len(frac) > 9 {
		return time.Time{}
	}
	ns := int64(0)
	if frac != "" {
		n, err := strconv.ParseUint(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil {
			return time.Time{}
		}
		ns = int64(n)
	}
	return time.Unix(s, ns)
}

// SinceStart is the wall time since the process started (see the package
// comment). ok is false where /proc is not available.
func SinceStart() (d time.Duration, ok bool) {
	upper, ok := sinceProcStart()
	if !ok {
		return 0, false
	}
	if launched.IsZero() {
		return upper, true
	}
	return pick(upper, time.Since(launched)), true
}

// pick is the time since the launch, l, when it lies within the clock
// tick that upper (the time since /proc's start) rounds up to, give or
// take launchSlack: the launcher reads its clock before it forks, up to a
// few ms before the process starts and possibly in the tick before. A
// launch time inherited from an earlier command, or made up, falls
// outside and upper stands.
func pick(upper, l time.Duration) time.Duration {
	if l >= 0 && l <= upper+launchSlack && l > upper-tick-launchSlack {
		return l
	}
	return upper
}

// tick is the clock tick /proc counts starttime in (sysconf(_SC_CLK_TCK)
// = 100 on Linux).
const tick = 10 * time.Millisecond

// launchSlack is how long before the process's start its launcher may
// have read the clock (the fork and exec between, on a busy machine).
const launchSlack = 5 * time.Millisecond

// sinceProcStart is the wall time since the process started, from
// /proc/self/stat's starttime and CLOCK_BOOTTIME (the clock starttime is
// counted on): rounded towards more by up to a tick.
func sinceProcStart() (d time.Duration, ok bool) {
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

// Call prints the line of a command called in process (cli.Call), its ms
// the call's wall time d, in= the process it ran in (tracing on only).
func Call(w io.Writer, cmd string, d time.Duration, code int) {
	if On {
		fmt.Fprintf(w, "trace: cmd=%s ms=%.1f exit=%d in=%s\n", cmd, float64(d)/1e6, code, name)
	}
}

// Git prints one git invocation's line (tracing on only).
func Git(sub string, d time.Duration) {
	if On {
		fmt.Fprintf(os.Stderr, "trace: git=%s ms=%.1f by=%s\n", sub, float64(d)/1e6, name)
	}
}
