package guard

import (
	"context"
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
	"github.com/treeloop/treeloop/lib/evidence"
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

// TestSeedGo: the guard's empty Go build cache starts from the seed only
// for a Go module whose sessions bwrap keeps away from the seed; it says
// when it builds one.
func TestSeedGo(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\ncase \"$1\" in\nenv) echo go1.99 ;;\nbuild) mkdir -p \"$GOCACHE/ab\" && echo o > \"$GOCACHE/ab/ab-d\" ;;\nesac\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	seeds := t.TempDir()
	t.Setenv(evidence.GoSeedEnv, seeds)
	env := []string{"PATH=" + bin + ":/usr/bin:/bin"}
	bwrap := config.Default()
	bwrap.Sandbox.Mode = config.SandboxBwrap
	for _, c := range []struct {
		name  string
		cfg   func(*config.Config)
		gomod bool
		want  bool
	}{
		{"bwrap, a module", nil, true, true},
		{"no go.mod", nil, false, false},
		{"no sandbox", func(c *config.Config) { c.Sandbox.Mode = config.SandboxNone }, true, false},
		{"guard unconfined", func(c *config.Config) { c.Sandbox.Guard = false }, true, false},
		{"seed writable", func(c *config.Config) { c.Sandbox.Writable = []string{seeds} }, true, false},
	} {
		dir := t.TempDir()
		if c.gomod {
			os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n"), 0o644)
		}
		var stderr strings.Builder
		cenv := &cli.Env{Name: "guard-run", Dir: dir, Stdout: io.Discard, Stderr: &stderr}
		cfg := bwrap
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		caches := evidence.CachesFor(filepath.Join(dir, ".git"))
		if err := caches.Prepare(); err != nil {
			t.Fatal(err)
		}
		if got := seedGo(context.Background(), cenv, cfg, env, caches); got != c.want {
			t.Errorf("%s: seeded %v, want %v (%s)", c.name, got, c.want, stderr.String())
		}
		if c.want && !strings.Contains(stderr.String(), "compiling Go's standard library") {
			t.Errorf("%s: the seed's build was not said: %q", c.name, stderr.String())
		}
		if !c.want && stderr.Len() > 0 {
			t.Errorf("%s: %q", c.name, stderr.String())
		}
	}
}
