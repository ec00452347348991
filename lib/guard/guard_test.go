package guard

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
)

// TestRunSIGTERM: a SIGTERM while the guard runs stops it and records the
// run as interrupted by SIGTERM, exit 143, never as a runner error or a
// failure. In a child test process (sigtermHelper): the signal goes to the
// whole process, and the guard's run makes it a child subreaper.
func TestRunSIGTERM(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGTERMHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "GUARD_SIGTERM_HELPER="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	want := "outcome=interrupted code=143 message=guard interrupted by SIGTERM\n"
	if !strings.Contains(string(out), want) {
		t.Errorf("helper output lacks %q:\n%s", want, out)
	}
}

func TestSIGTERMHelper(t *testing.T) {
	dir := os.Getenv("GUARD_SIGTERM_HELPER")
	if dir == "" {
		return // only meaningful as TestRunSIGTERM's child
	}
	in := cli.NotifyInterrupt()
	defer in.Stop()
	cfg := config.Default()
	cfg.Sandbox.Mode = config.SandboxNone
	started := filepath.Join(dir, "started")
	cfg.Guard.Command = []string{"sh", "-c", "echo > " + started + "; exec sleep 60"}
	go func() {
		for {
			if _, err := os.Stat(started); err == nil {
				syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	env := &cli.Env{Dir: dir, Stdout: io.Discard, Stderr: io.Discard}
	rec, code, synced := Run(in, env, cfg, time.Now().Add(time.Minute), filepath.Join(dir, "guard.log"), Judging{})
	rec, code = synced(rec, code)
	if code != exit.SIGTERM {
		t.Errorf("code %d, want %d", code, exit.SIGTERM)
	}
	fmt.Printf("outcome=%s code=%d message=%s\n", rec.Outcome, code, rec.Message)
}
