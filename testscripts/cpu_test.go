package testscripts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// recordCPU, when TREELOOP_SCRIPT_CPU names a file, appends a line to it
// when the script ends: its name, the CPU seconds (user and system) of
// the processes it ran and of the test binary itself, and its wall
// seconds, as "name child_s self_s wall_s". The figures come from
// getrusage's deltas over the script, so they are the script's own only
// when scripts run one at a time (-test.parallel=1): bench/script-cpu.sh
// runs them so. On a busy 2-core machine CPU time, not wall time, says
// what a script costs the suite.
func recordCPU(env *testscript.Env) {
	out := os.Getenv("TREELOOP_SCRIPT_CPU")
	if out == "" {
		return
	}
	name := strings.TrimPrefix(filepath.Base(env.WorkDir), "script-")
	children, self := rusageSecs(syscall.RUSAGE_CHILDREN), rusageSecs(syscall.RUSAGE_SELF)
	start := time.Now()
	env.Defer(func() {
		line := fmt.Sprintf("%s %.2f %.2f %.2f\n", name,
			rusageSecs(syscall.RUSAGE_CHILDREN)-children, rusageSecs(syscall.RUSAGE_SELF)-self, time.Since(start).Seconds())
		f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			env.T().Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line); err != nil {
			env.T().Fatal(err)
		}
	})
}

// rusageSecs is the user and system CPU seconds getrusage reports for who.
func rusageSecs(who int) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
