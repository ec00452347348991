package runcheck

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/sandbox"
)

// checkContext is a Context on a fresh directory with the default
// configuration, the command backend running sh and the guard `true`, no
// sandbox; the pass caches its own.
func checkContext(t *testing.T) *Context {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	cfg := config.Default()
	cfg.Agent.Backend, cfg.Agent.Bin = "command", "sh"
	cfg.Guard.Command = []string{"true"}
	cfg.Sandbox.Mode = config.SandboxNone
	return &Context{Root: t.TempDir(), Config: cfg}
}

// problems is the named check's problems in rep.
func problems(rep Report, name string) []string {
	for _, r := range rep.Checks {
		if r.Name == name {
			return r.Problems
		}
	}
	return nil
}

// TestRun: every check in order, ok when none has a problem; an invalid
// configuration fails config and skips the rest, each error with where to
// fix it; the network's checks only when asked for; Lines as
// runner-check prints them.
func TestRun(t *testing.T) {
	ctx := checkContext(t)
	rep := ctx.Run()
	var names []string
	for _, r := range rep.Checks {
		names = append(names, r.Name)
	}
	if !rep.OK || !slices.Equal(names, []string{"config", "agent", "guard", "cassette", "budgets", "sandbox"}) {
		t.Fatalf("a good configuration: %+v", rep)
	}
	if lines := rep.Lines(); len(lines) != 6 || lines[0] != "config: ok" || lines[5] != "sandbox: ok" {
		t.Errorf("Lines = %q", lines)
	}
	ctx.ConfigErr = config.Errors{{Key: "max_iterations", Msg: "max_iterations must be at least 1"}, {Key: "agent.backend", Msg: "agent.backend is unknown"}}
	rep = ctx.Run()
	if rep.OK || len(rep.Checks) != 6 || rep.Checks[1].Skipped != skippedConfig || rep.Checks[1].OK {
		t.Errorf("an invalid configuration: %+v", rep)
	}
	if p := problems(rep, "config"); len(p) != 2 || p[0] != "max_iterations must be at least 1 (fix .runner/state/config.toml)" || p[1] != "agent.backend is unknown (fix .runner/state/config.toml)" {
		t.Errorf("config's problems %q", p)
	}
	if lines := rep.Lines(); !slices.Contains(lines, "agent: skipped: config invalid") {
		t.Errorf("Lines = %q", lines)
	}
	ctx.ConfigErr = errors.New("cannot read it")
	if p := problems(ctx.Run(), "config"); len(p) != 1 || p[0] != "cannot read it (fix .runner/state/config.toml)" {
		t.Errorf("an unreadable configuration: %q", p)
	}
	ctx.ConfigErr, ctx.Network = nil, true
	if rep := ctx.Run(); len(rep.Checks) != 7 || rep.Checks[6].Name != "endpoint" {
		t.Errorf("with the network: %+v", rep.Checks)
	}
}

// TestRunOneFailing: one failing check fails the whole report, though
// the checks after it pass, so no iteration begins with a missing agent
// or guard.
func TestRunOneFailing(t *testing.T) {
	for _, tt := range []struct {
		check string
		set   func(*Context)
	}{
		{"agent", func(ctx *Context) { ctx.Config.Agent.Bin = "treeloop-no-such-agent" }},
		{"guard", func(ctx *Context) { ctx.Config.Guard.Command = []string{"./ci.sh"} }},
	} {
		t.Run(tt.check, func(t *testing.T) {
			ctx := checkContext(t)
			tt.set(ctx)
			rep := ctx.Run()
			if len(problems(rep, tt.check)) == 0 {
				t.Fatalf("%s has no problem: %+v", tt.check, rep)
			}
			if last := rep.Checks[len(rep.Checks)-1]; !last.OK {
				t.Fatalf("the last check %s fails too: %+v", last.Name, last)
			}
			if rep.OK {
				t.Errorf("a failing %s, the last check passing: report ok = true, want false", tt.check)
			}
		})
	}
}

// TestCheckAgentAndGuard: the agent's executable and the guard's program
// are found as a session would start them, or named with what to do; the
// replay backend needs none.
func TestCheckAgentAndGuard(t *testing.T) {
	ctx := checkContext(t)
	if p := checkAgent(ctx); p != nil {
		t.Errorf("sh: %q", p)
	}
	ctx.Config.Agent.Bin = "treeloop-no-such-agent"
	if p := checkAgent(ctx); len(p) != 1 || !strings.Contains(p[0], "the command backend's executable treeloop-no-such-agent: not found on PATH") {
		t.Errorf("a missing agent: %q", p)
	}
	ctx.Config.Agent.Bin = ""
	if p := checkAgent(ctx); len(p) != 1 || !strings.Contains(p[0], "needs an executable: set [agent] bin") {
		t.Errorf("no agent: %q", p)
	}
	ctx.Config.Agent.Backend = "replay"
	if p := checkAgent(ctx); p != nil {
		t.Errorf("replay: %q", p)
	}
	if p := checkGuard(ctx); p != nil {
		t.Errorf("true: %q", p)
	}
	ctx.Config.Guard.Command = []string{"./ci.sh"}
	if p := checkGuard(ctx); len(p) != 1 || !strings.Contains(p[0], "the guard's program ./ci.sh: no such file: install it, or set [guard] command") {
		t.Errorf("a missing guard: %q", p)
	}
	os.WriteFile(filepath.Join(ctx.Root, "ci.sh"), []byte("#!/nonexistent/interpreter\n"), 0o755)
	if p := checkGuard(ctx); len(p) != 1 || !strings.HasPrefix(p[0], "the guard's program ./ci.sh cannot start") {
		t.Errorf("a guard that cannot start: %q", p)
	}
}

// TestCheckCassette: the replay backend needs a cassette that is a
// directory outside the work tree; another backend records into one
// that may not exist yet.
func TestCheckCassette(t *testing.T) {
	ctx := checkContext(t)
	if p := checkCassette(ctx); p != nil {
		t.Errorf("no cassette, command backend: %q", p)
	}
	outside := filepath.Join(t.TempDir(), "tapes")
	ctx.Config.Agent.Cassette = outside
	if p := checkCassette(ctx); p != nil {
		t.Errorf("a cassette to record into: %q", p)
	}
	ctx.Config.Agent.Backend = "replay"
	for _, c := range []struct {
		setup func()
		says  string
	}{
		{func() {}, "does not exist"},
		{func() { os.WriteFile(outside, nil, 0o644) }, "is not a directory"},
		{func() { os.Remove(outside); ctx.Config.Agent.Cassette = "" }, "the replay backend needs a cassette"},
		{func() { ctx.Config.Agent.Cassette = "tapes" }, "inside the repository"},
	} {
		c.setup()
		if p := checkCassette(ctx); len(p) != 1 || !strings.Contains(p[0], c.says) {
			t.Errorf("cassette %q: %q, want %q", ctx.Config.Agent.Cassette, p, c.says)
		}
	}
	os.Mkdir(outside, 0o755)
	ctx.Config.Agent.Cassette = outside
	if p := checkCassette(ctx); p != nil {
		t.Errorf("a recorded cassette: %q", p)
	}
}

// TestSandboxChecks: bwrap's check and a dry run of the sandbox pass
// here; the notes say what a guard outside the sandbox leaves open; a
// container image's own programs are not looked for on this machine;
// TrimName drops the check's name a problem starts with.
func TestSandboxChecks(t *testing.T) {
	ctx := checkContext(t)
	gittest.Run(t, ctx.Root, "init", "-q") // the sandbox confines a repository
	ctx.Config.Sandbox.Mode = config.SandboxBwrap
	if p := checkSandbox(ctx); p != nil {
		t.Errorf("bwrap: %q", p)
	}
	if notes := sandboxNotes(ctx.Config); slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "guard = false") }) {
		t.Errorf("a confined guard noted: %q", notes)
	}
	ctx.Config.Sandbox.Guard = false
	if notes := sandboxNotes(ctx.Config); !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "the guard runs unconfined ([sandbox] guard = false)") }) {
		t.Errorf("an unconfined guard not noted: %q", notes)
	}
	for _, r := range ctx.Run().Checks {
		if noted := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "guard = false") }); noted != (r.Name == "sandbox") {
			t.Errorf("check %s: notes %q", r.Name, r.Notes)
		}
	}
	ctx.Config.Sandbox.Mode, ctx.Config.Sandbox.Image = config.SandboxDocker, "my-image"
	if !inImage(ctx, "node") || inImage(ctx, "./node") {
		t.Error("inImage under a custom image")
	}
	ctx.Config.Sandbox.Image = config.DefaultImage
	if inImage(ctx, "node") {
		t.Error("inImage under the default image, which runs this machine's /usr")
	}
	if got := TrimName("sandbox", []string{"sandbox: bwrap missing", "other"}); !slices.Equal(got, []string{"bwrap missing", "other"}) {
		t.Errorf("TrimName = %q", got)
	}
}

// TestDryRun: the sandbox's dry run starts the agent CLI (--version)
// under a session's mounts: one that reads its settings under the home
// bwrap hides fails, and the problem names the directory to make
// readable; one bwrap shows
// passes and is remembered (its key written), the next dry run then
// taken from it; the replay backend starts nothing.
func TestDryRun(t *testing.T) {
	ctx := checkContext(t)
	gittest.Run(t, ctx.Root, "init", "-q")
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("HOME", home)
	// The CLI bwrap shows (the program it runs), but not the settings
	// under the home it reads.
	hidden := filepath.Join(home, "bin", "claude")
	os.MkdirAll(filepath.Dir(hidden), 0o755)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte("{}"), 0o644)
	os.WriteFile(hidden, []byte("#!/bin/sh\ncat \"$HOME/.claude/settings.json\" >/dev/null && echo 1.0\n"), 0o755)
	ctx.Config.Sandbox.Mode = config.SandboxBwrap
	ctx.Config.Agent.Backend, ctx.Config.Agent.Bin = "claude", hidden
	err := dryRun(ctx)
	if err == nil {
		t.Fatal("a CLI under the hidden home passed the dry run")
	}
	if p := dryRunProblem(ctx, err); !strings.Contains(p, "~/.claude") || !strings.Contains(p, "readable") || !strings.Contains(p, "or set [sandbox] mode = \"none\"") {
		t.Errorf("the problem: %q", p)
	}
	if _, err := os.Stat(sandboxKey(ctx)); err == nil {
		t.Error("a failed dry run remembered")
	}
	ctx.Config.Agent.Bin = "/bin/true"
	if err := dryRun(ctx); err != nil {
		t.Fatalf("/bin/true under bwrap: %v", err)
	}
	if _, err := os.Stat(sandboxKey(ctx)); err != nil {
		t.Errorf("a passed dry run not remembered: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Join(ctx.Root, ".runner", "iterations"))
	if len(entries) != 0 {
		t.Errorf("the dry run's scratch left: %v", entries)
	}
	// Remembered: the next dry run starts nothing, even where it could
	// not make its scratch (a file where the iterations directory goes).
	iters := filepath.Join(ctx.Root, ".runner", "iterations")
	os.RemoveAll(iters)
	os.WriteFile(iters, nil, 0o644)
	if err := dryRun(ctx); err != nil {
		t.Errorf("a remembered dry run ran again: %v", err)
	}
	ctx.Config.Agent.Backend = "gemini" // another key
	if err := dryRun(ctx); err == nil {
		t.Error("a dry run of another configuration taken from the last one's")
	}
	ctx.Config.Agent.Backend, ctx.Config.Agent.Bin = "replay", hidden
	if err := dryRun(ctx); err != nil {
		t.Errorf("replay: %v", err)
	}
}

// sandboxKey is where a passed dry run of ctx's agent is remembered.
func sandboxKey(ctx *Context) string {
	return sandbox.ProbeKey(ctx.Config, agent.Executable(ctx.Config.Agent))
}
