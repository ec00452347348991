package proc

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// DeferSignalsEnv is the variable runner-step and runner-loop set to "1"
// for the commands they run (DESIGN.md decision 12). SIGINT and SIGTERM sent
// to the porcelain's process group reach every member of it at once: a
// command that died of them would leave its write half done (an iteration
// never committed, a run record never begun). With the variable set, a
// command holds them instead (DeferSignals): it finishes its work, and the
// porcelain, which got the same signal, acts on it between two commands.
// The commands that run a session (agent-exec, guard-run) still stop it at
// once: their Interrupt (lib/cli) takes the held signals.
const DeferSignalsEnv = "RUNNER_DEFER_SIGNALS"

// PendingSignalEnv names, for a command the porcelain starts, a signal
// that reached the porcelain's subshell between its fork and its exec of
// the command ("INT" or "TERM"): bash ran its trap there, where the signal
// reaches no child, so the subshell hands it on in the environment
// (treeloop-sh-setup's pending) and DeferSignals takes it as held.
const PendingSignalEnv = "RUNNER_SIGNAL_PENDING"

// held receives SIGINT and SIGTERM from DeferSignals on; nil until then.
var held chan os.Signal

// DeferSignals makes this process hold SIGINT and SIGTERM rather than die of
// them, from now until it exits, and puts the helper processes it starts
// (ShelterChild) out of their reach; a signal PendingSignalEnv names is held
// as though it had come now. Call it first, before any other
// goroutine starts; lib/cli.Run does when DeferSignalsEnv is "1".
func DeferSignals() {
	if held != nil {
		return
	}
	held = make(chan os.Signal, 4)
	signal.Notify(held, syscall.SIGINT, syscall.SIGTERM)
	switch os.Getenv(PendingSignalEnv) {
	case "INT":
		held <- syscall.SIGINT
	case "TERM":
		held <- syscall.SIGTERM
	}
	// Not handed on to the sessions this process starts.
	os.Unsetenv(PendingSignalEnv)
}

// Held is the channel of the signals held since DeferSignals, or nil when
// signals are not deferred. Whoever reads it acts on them; unread, they are
// dropped once it is full, never fatal.
func Held() <-chan os.Signal { return held }

// Sheltered reports whether this process defers signals (DeferSignals), so
// that ShelterChild puts its helper processes in groups of their own.
func Sheltered() bool { return held != nil }

// ShelterChild prepares cmd, a helper process such as git, for a process
// that defers signals: it runs in a process group of its own, so that a
// signal to the caller's group does not cut it short (git removes its lock
// files and exits at once, failing the write this process is finishing),
// and it is killed should this process die (Pdeathsig). Otherwise cmd is
// left as it is: it shares the caller's fate, as a command run by hand
// does.
func ShelterChild(cmd *exec.Cmd) {
	if held == nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
