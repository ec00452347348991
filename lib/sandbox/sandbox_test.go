package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/proc"
)

// repo makes a git repository with a .runner directory in a temp dir.
func repo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".runner", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func cfg() config.Sandbox { return config.Default().Sandbox }

// TestCheck: bwrap is installed on every machine the tests run on (.ci/run
// installs bubblewrap), and it can create its namespaces there.
func TestCheck(t *testing.T) {
	if ps := Check(); len(ps) > 0 {
		t.Fatalf("Check() = %q, want no problems", ps)
	}
}

// TestCheckMissing: without bwrap on PATH the problem names the fix.
func TestCheckMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ps := Check()
	if len(ps) != 1 || !strings.Contains(ps[0], "apt-get install bubblewrap") {
		t.Fatalf("Check() without bwrap = %q", ps)
	}
}

func TestWrapStartErrors(t *testing.T) {
	s, err := New(cfg(), repo(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var se *proc.StartError
	if _, err := s.Wrap([]string{"no-such-agent-cli"}); !errors.As(err, &se) || se.Name != "no-such-agent-cli" {
		t.Errorf("Wrap(missing command) = %v, want a StartError naming it", err)
	}
	sh, _ := exec.LookPath("sh")
	t.Setenv("PATH", t.TempDir())
	if _, err := s.Wrap([]string{sh}); !errors.As(err, &se) || se.Name != Bin {
		t.Errorf("Wrap without bwrap = %v, want a StartError naming bwrap", err)
	}
}

// TestWrapRuns runs a real command in the sandbox: it writes the
// repository, cannot write the runner's files or .git, and does not see
// the home directory; network none leaves only the loopback device.
func TestWrapRuns(t *testing.T) {
	root := repo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.WriteFile(filepath.Join(home, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := cfg()
	c.Network = config.NetworkNone
	s, err := New(c, root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	script := `echo ok > in-repo.txt
{ echo x > .runner/state/config.toml; } 2>/dev/null && echo runner-written
{ echo x > .git/config; } 2>/dev/null && echo git-written
cat "$HOME/secret" 2>/dev/null
tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`
	argv, err := s.Wrap([]string{"sh", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(argv, "--unshare-net") || !slices.Contains(argv, "--cap-drop") {
		t.Errorf("argv lacks --unshare-net or --cap-drop: %q", argv)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "lo" {
		t.Errorf("output = %q, want only the loopback device listed", got)
	}
	if b, err := os.ReadFile(filepath.Join(root, "in-repo.txt")); err != nil || string(b) != "ok\n" {
		t.Errorf("in-repo.txt = %q, %v", b, err)
	}
}

// TestWrapRelativeCommand: a command named by a relative path
// (.venv/bin/python, node_modules/.bin/jest) is the root's file, whatever
// the runner's own working directory: the witness's scratch checkout runs
// its own copy of a script, not the work tree's.
func TestWrapRelativeCommand(t *testing.T) {
	root := repo(t)
	t.Setenv("HOME", t.TempDir())
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "check"), []byte("#!/bin/sh\necho root\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.MkdirAll(filepath.Join(elsewhere, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "bin", "check"), []byte("#!/bin/sh\necho elsewhere\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(elsewhere)
	argv := wrapped(t, root, "bin/check")
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "root" {
		t.Errorf("bin/check ran %q's, want the root's", got)
	}
}

// TestWrapVirtualEnvironment: a virtual environment's python in a
// repository that lies in a hidden place (/tmp here, the home directory
// for most users) runs as the environment's, its packages importable: run
// as the file its link resolves to, it would be the base interpreter.
func TestWrapVirtualEnvironment(t *testing.T) {
	root := repo(t)
	t.Setenv("HOME", t.TempDir())
	if out, err := exec.Command("/usr/bin/python3", "-m", "venv", "--without-pip", filepath.Join(root, ".venv")).CombinedOutput(); err != nil {
		t.Fatalf("make a virtual environment: %v: %s", err, out)
	}
	site, err := filepath.Glob(filepath.Join(root, ".venv", "lib", "python3*", "site-packages"))
	if err != nil || len(site) != 1 {
		t.Fatalf("site-packages: %v %v", site, err)
	}
	if err := os.WriteFile(filepath.Join(site[0], "only_in_venv.py"), []byte("NAME = 'venv'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := wrapped(t, root, ".venv/bin/python", "-c", "import only_in_venv; print(only_in_venv.NAME)")
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "venv" {
		t.Errorf("the environment's python: %v: %s", err, out)
	}
}

// TestWrapRepoUnderHome: a repository under the home directory (the common
// ~/project) leaves the home hidden all the same, the repository and its
// .git shown. The home lies outside /tmp, which the sandbox hides whole.
func TestWrapRepoUnderHome(t *testing.T) {
	outer, err := os.MkdirTemp("/var/tmp", "treeloop-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outer) })
	home := filepath.Join(outer, "home")
	root := filepath.Join(home, "project")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(root, ".runner", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	s, err := New(cfg(), root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	script := `cat "$HOME/.ssh/id_ed25519" 2>/dev/null && echo key-read
echo ok > in-repo.txt && echo repo-written
git rev-parse --git-dir`
	argv, err := s.Wrap([]string{"sh", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "repo-written\n.git" {
		t.Errorf("output = %q, want the repository written and its .git found, the key unread", got)
	}
}

// TestWrapSymlinkedCommand: commands are often symlinks (/usr/bin/awk,
// an npm CLI in /usr/bin); one outside the hidden places runs as it is,
// one inside them (here under a hidden home) is shown as its target.
func TestWrapSymlinkedCommand(t *testing.T) {
	root := repo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "bin", "agent-cli")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sh, link); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg(), root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// /usr/bin/awk is a symlink (Debian's alternatives) outside them.
	for _, cmd := range [][]string{{link, "-c", "echo ran"}, {"awk", "BEGIN { print \"ran\" }"}} {
		argv, err := s.Wrap(cmd)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ran" {
			t.Errorf("%s in the sandbox: %v: %s", cmd[0], err, out)
		}
	}
}

// BenchmarkDirect and BenchmarkBwrap give the sandbox's cost per command
// start: the difference is what bwrap adds to each agent session (and
// guard run, with guard = true).
func BenchmarkDirect(b *testing.B) { benchRun(b, false) }
func BenchmarkBwrap(b *testing.B)  { benchRun(b, true) }

func benchRun(b *testing.B, wrap bool) {
	root := repo(b)
	s, err := New(cfg(), root, []string{filepath.Join(root, ".runner", "state")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	argv := []string{"true"}
	if wrap {
		if argv, err = s.Wrap(argv); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := proc.Run(context.Background(), proc.Spec{Argv: argv, Dir: root, KillEscaped: true})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v, exit %d", err, res.ExitCode)
		}
	}
}

func TestBwrapKeepsOut(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	root := filepath.Join(t.TempDir(), "repo")
	seed := filepath.Join(home, ".cache", "treeloop", "go-std")
	for _, d := range []string{root, seed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	bwrap := config.Sandbox{Mode: config.SandboxBwrap, Guard: true}
	for _, c := range []struct {
		name string
		cfg  func(*config.Sandbox)
		p    string
		want bool
	}{
		{"outside", nil, seed, true},
		{"readable", func(s *config.Sandbox) { s.Readable = []string{"~/.cache"} }, seed, true},
		{"under the root", nil, filepath.Join(root, ".seed"), false},
		{"the root through a link", nil, filepath.Join(link, ".seed"), false},
		{"writable ~/.cache", func(s *config.Sandbox) { s.Writable = []string{"~/.cache"} }, seed, false},
		{"writable itself", func(s *config.Sandbox) { s.Writable = []string{seed} }, seed, false},
		{"writable beside", func(s *config.Sandbox) { s.Writable = []string{"~/.cache/go-build"} }, seed, true},
		{"guard unconfined", func(s *config.Sandbox) { s.Guard = false }, seed, false},
		{"none", func(s *config.Sandbox) { s.Mode = config.SandboxNone }, seed, false},
		{"docker", func(s *config.Sandbox) { s.Mode = config.SandboxDocker }, seed, false},
	} {
		cfg := bwrap
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		if got := BwrapKeepsOut(cfg, root, c.p); got != c.want {
			t.Errorf("%s: BwrapKeepsOut = %v, want %v", c.name, got, c.want)
		}
	}
}
