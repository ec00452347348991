package stepctx

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// repo is a git repository whose commit (returned) has config.toml with
// max_iterations = 7, and an iteration directory "iter" whose begin.json
// names head as its head_before.
func repo(t *testing.T, head func(commit string) string) (*cli.Env, string) {
	t.Helper()
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	gittest.Run(t, dir, "init", "-q")
	write(t, filepath.Join(dir, layout.Config), "max_iterations = 7\n")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "config")
	commit := gittest.Run(t, dir, "rev-parse", "HEAD")
	os.MkdirAll(filepath.Join(dir, "iter"), 0o755)
	if err := iterdir.Write(filepath.Join(dir, "iter"), iterdir.BeginFile, iterdir.Begin{Version: 1, RunID: "r1", Iteration: 1, NodeID: "n1", HeadBefore: head(commit)}); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	return &cli.Env{Name: "test", Stdout: io.Discard, Stderr: &errb, Dir: dir}, commit
}

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func same(c string) string { return c }

// With a base, config.toml is read from that commit, not from the work
// tree a session may have changed; without one, from the work tree.
func TestConfigFromTheBase(t *testing.T) {
	env, commit := repo(t, same)
	write(t, filepath.Join(env.Dir, layout.Config), "max_iterations = 99\n")
	it, err := Load(env, "iter", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if it.Config.MaxIterations != 7 || it.Base != commit || it.Begin.RunID != "r1" || it.Dir != filepath.Join(env.Dir, "iter") {
		t.Fatalf("with --base: max_iterations %d, base %s, begin %+v, dir %s", it.Config.MaxIterations, it.Base, it.Begin, it.Dir)
	}
	it, err = Load(env, "iter", "")
	if err != nil {
		t.Fatal(err)
	}
	if it.Config.MaxIterations != 99 || it.Base != commit {
		t.Fatalf("without --base: max_iterations %d, base %s", it.Config.MaxIterations, it.Base)
	}
}

// A begin.json that does not name the step's base was changed: refused as
// a runner error; so are a base that is no commit, a config.toml that
// does not parse and a directory with no begin.json.
func TestRefusals(t *testing.T) {
	env, _ := repo(t, func(string) string { return strings.Repeat("0", 40) })
	if _, err := Load(env, "iter", "HEAD"); exit.Code(err) != exit.RunnerError || !strings.Contains(err.Error(), "the iteration directory was changed") {
		t.Fatalf("another head_before: %v (exit %d)", err, exit.Code(err))
	}
	if _, err := Load(env, "iter", "no-such-rev"); exit.Code(err) != exit.RunnerError || err.Error() != "--base no-such-rev: not a commit of this repository" {
		t.Fatalf("a bad base: %v", err)
	}
	// Without a base, a config.toml of the work tree that does not parse
	// is a runner error too.
	write(t, filepath.Join(env.Dir, layout.Config), "max_iterations = \"x\"\n")
	if _, err := Load(env, "iter", ""); err == nil || exit.Code(err) != exit.RunnerError {
		t.Fatalf("a bad config.toml in the work tree: %v (exit %d)", err, exit.Code(err))
	}
	os.MkdirAll(filepath.Join(env.Dir, "empty"), 0o755)
	if _, err := Load(env, "empty", ""); exit.Code(err) != exit.RunnerError || !strings.Contains(err.Error(), "pass the directory printed by iter-log begin") {
		t.Fatalf("no begin.json: %v", err)
	}
}

// A config.toml the base does not have is the defaults; one that does not
// parse names the commit it was read from.
func TestConfigFrom(t *testing.T) {
	cfg, err := ConfigFrom("0123456789abcdef", []byte("max_iterations = 5\n"), false)
	if err != nil || cfg.MaxIterations == 5 {
		t.Fatalf("not found: max_iterations %d (%v), want the default", cfg.MaxIterations, err)
	}
	_, err = ConfigFrom("0123456789abcdef", []byte("max_iterations = \"x\"\n"), true)
	if exit.Code(err) != exit.RunnerError || !strings.Contains(err.Error(), "config.toml (at 0123456789ab)") {
		t.Fatalf("a bad file: %v", err)
	}
}

// The seal line, the facts said (shell-quoted) and the exit line go to the
// descriptor, the exit line last with the error's code; without a
// descriptor (0) nothing is written.
func TestSealFD(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	env := &cli.Env{Stderr: io.Discard}
	f := SealFD{SealFD: int(w.Fd())}
	f.Tell(env, "abc")
	f.Say(env, "said_done", "1")
	f.Say(env, "note", "it's")
	f.Exit(exit.Errorf(exit.AgentError, "x"))
	SealFD{}.Tell(env, "never")
	SealFD{}.Say(env, "said_done", "never")
	w.Close()
	got, _ := io.ReadAll(r)
	if string(got) != "seal=abc\nsaid_done='1'\nnote='it'\\''s'\nexit=5\n" {
		t.Fatalf("descriptor got %q", got)
	}
}

// StartWithTools reads the node's tools.json from the base with
// config.toml (what the base has, not the work tree; OK false when the
// base has none); Start leaves it unread.
func TestStartWithTools(t *testing.T) {
	env, commit := repo(t, same)
	load := func(tools bool) Iteration {
		t.Helper()
		start := Start
		if tools {
			start = StartWithTools
		}
		l, err := start(env, "iter", commit)
		if err != nil {
			t.Fatal(err)
		}
		it, err := l.Wait()
		if err != nil || it.Config.MaxIterations != 7 {
			t.Fatalf("config: %d, %v", it.Config.MaxIterations, err)
		}
		return it
	}
	if it := load(true); it.NodeTools.Rev != commit || it.NodeTools.OK || it.NodeTools.Err != nil {
		t.Errorf("no tools.json at the base: %+v", it.NodeTools)
	}
	path := filepath.Join(env.Dir, layout.NodeTools("n1"))
	write(t, path, `{"model":"m1"}`+"\n")
	gittest.Run(t, env.Dir, "add", "-A")
	gittest.Run(t, env.Dir, "commit", "-qm", "tools")
	commit = gittest.Run(t, env.Dir, "rev-parse", "HEAD")
	if err := iterdir.Write(filepath.Join(env.Dir, "iter"), iterdir.BeginFile, iterdir.Begin{Version: 1, RunID: "r1", Iteration: 1, NodeID: "n1", HeadBefore: commit}); err != nil {
		t.Fatal(err)
	}
	write(t, path, `{"model":"the session's"}`+"\n")
	if it := load(true); !it.NodeTools.OK || string(it.NodeTools.Data) != `{"model":"m1"}`+"\n" || it.NodeTools.Path != layout.NodeTools("n1") {
		t.Errorf("tools.json at the base: %+v %q", it.NodeTools, it.NodeTools.Data)
	}
	if it := load(false); it.NodeTools.Rev != "" {
		t.Errorf("Start read tools.json: %+v", it.NodeTools)
	}
}

// StartWith reads the files asked for from the base, with config.toml and
// tools.json (one git process), in the order asked, as committed there
// (not as the work tree has them), a file the base lacks not found; none
// without a base.
func TestStartWithAtBase(t *testing.T) {
	env, _ := repo(t, same)
	write(t, filepath.Join(env.Dir, "a.txt"), "at the base\n")
	gittest.Run(t, env.Dir, "add", "-A")
	gittest.Run(t, env.Dir, "commit", "-qm", "a")
	commit := gittest.Run(t, env.Dir, "rev-parse", "HEAD")
	if err := iterdir.Write(filepath.Join(env.Dir, "iter"), iterdir.BeginFile, iterdir.Begin{Version: 1, RunID: "r1", Iteration: 1, NodeID: "n1", HeadBefore: commit}); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(env.Dir, "a.txt"), "the session's\n")
	for _, tools := range []bool{false, true} {
		l, err := StartWith(env, "iter", commit, tools, "missing.txt", "a.txt")
		if err != nil {
			t.Fatal(err)
		}
		it, err := l.Wait()
		if err != nil || it.Config.MaxIterations != 7 {
			t.Fatalf("config: %d, %v", it.Config.MaxIterations, err)
		}
		if len(it.AtBase) != 2 || it.AtBase[0].OK || it.AtBase[0].Path != "missing.txt" || !it.AtBase[1].OK || string(it.AtBase[1].Data) != "at the base\n" || it.AtBase[1].Rev != commit {
			t.Fatalf("tools %v: AtBase %+v", tools, it.AtBase)
		}
		if got := it.NodeTools.Rev != ""; got != tools {
			t.Fatalf("tools %v: tools.json read: %v", tools, got)
		}
	}
	l, err := StartWith(env, "iter", "", false, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if it, err := l.Wait(); err != nil || it.AtBase != nil {
		t.Fatalf("without a base: AtBase %+v, %v", it.AtBase, err)
	}
}

// The standard descriptors are never a seal descriptor: Tell, Say and Exit
// write nothing to descriptor 2 (nor 0 or 1); a descriptor that cannot
// take a line is a warning naming it, not an error.
func TestSealFDRefusesStandardAndWarns(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Descriptor 2 is the pipe's write end while the three speak.
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup3(int(w.Fd()), 2, 0); err != nil {
		t.Fatal(err)
	}
	env := &cli.Env{Stderr: io.Discard}
	f := SealFD{SealFD: 2}
	f.Tell(env, "abc")
	f.Say(env, "said_done", "1")
	f.Exit(nil)
	if err := syscall.Dup3(saved, 2, 0); err != nil {
		t.Fatal(err)
	}
	syscall.Close(saved)
	w.Close()
	if got, _ := io.ReadAll(r); len(got) != 0 {
		t.Fatalf("descriptor 2 got %q", got)
	}

	// The read end of a pipe takes no write.
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	var warn bytes.Buffer
	env = &cli.Env{Name: "test", Stderr: &warn}
	bad := SealFD{SealFD: int(r2.Fd())}
	bad.Tell(env, "abc")
	bad.Say(env, "said_done", "1")
	want := fmt.Sprintf("--seal-fd %d: ", r2.Fd())
	if n := strings.Count(warn.String(), want); n != 2 {
		t.Fatalf("warnings %q, want two naming %q", warn.String(), want)
	}
}

// Without a base, a config.toml that does not parse in the work tree is a
// runner error.
func TestWorkTreeConfigRefused(t *testing.T) {
	env, _ := repo(t, same)
	write(t, filepath.Join(env.Dir, layout.Config), "max_iterations = \"x\"\n")
	if _, err := Load(env, "iter", ""); err == nil || exit.Code(err) != exit.RunnerError {
		t.Fatalf("a bad config.toml: %v (exit %d)", err, exit.Code(err))
	}
}

// A config.toml at the base that is no file (a directory there) is a
// runner error when read with tools.json or other files too, as when
// read alone.
func TestConfigNotAFileAtBase(t *testing.T) {
	env, _ := repo(t, same)
	cfg := filepath.Join(env.Dir, layout.Config)
	os.Remove(cfg)
	write(t, filepath.Join(cfg, "inside"), "x\n")
	gittest.Run(t, env.Dir, "add", "-A")
	gittest.Run(t, env.Dir, "commit", "-qm", "config.toml is a directory")
	commit := gittest.Run(t, env.Dir, "rev-parse", "HEAD")
	if err := iterdir.Write(filepath.Join(env.Dir, "iter"), iterdir.BeginFile, iterdir.Begin{Version: 1, RunID: "r1", Iteration: 1, NodeID: "n1", HeadBefore: commit}); err != nil {
		t.Fatal(err)
	}
	for _, tools := range []bool{false, true} {
		l, err := StartWith(env, "iter", commit, tools, "a.txt")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Wait(); err == nil || exit.Code(err) != exit.RunnerError || !strings.Contains(err.Error(), "read "+layout.Config+" at ") {
			t.Fatalf("tools %v: %v (exit %d)", tools, err, exit.Code(err))
		}
	}
	if _, err := Load(env, "iter", commit); err == nil || exit.Code(err) != exit.RunnerError {
		t.Fatalf("read alone: %v", err)
	}
}
