package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/proc"
)

// requireDocker is set in CI (.ci/run): an engine that cannot run a
// container fails the tests that need one instead of skipping them.
const requireDocker = "TREELOOP_REQUIRE_DOCKER"

// engineCfg is the [sandbox] table of mode "docker" for engine, its default
// image built. Where the engine cannot build it, the test is skipped, or
// fails with $TREELOOP_REQUIRE_DOCKER=1. Podman gets the configuration it
// needs on a kernel with hybrid cgroups (examples/podman/containers.conf).
func engineCfg(t testing.TB, engine string) config.Sandbox {
	t.Helper()
	c := cfg()
	c.Mode, c.Engine = config.SandboxDocker, engine
	if engine == config.EnginePodman {
		conf, err := filepath.Abs(filepath.Join("..", "..", "examples", "podman", "containers.conf"))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("CONTAINERS_CONF", conf)
	}
	if _, err := BuildImage(c); err != nil {
		if os.Getenv(requireDocker) == "1" {
			t.Fatalf("%s=1, and %s cannot build the default image: %v", requireDocker, engine, err)
		}
		t.Skipf("%s cannot build the default image here: %v", engine, err)
	}
	return c
}

func TestContainerName(t *testing.T) {
	s := Session{Role: "agent", Dir: "/r/.runner/iterations/run-1/0007"}
	name := ContainerName("/r", s)
	if !strings.HasPrefix(name, "treeloop-run-1-0007-agent-") || len(name) != len("treeloop-run-1-0007-agent-")+8 {
		t.Errorf("ContainerName = %q", name)
	}
	if name != ContainerName("/r/", s) {
		t.Error("the name depends on how the root is spelled")
	}
	for _, other := range []string{ContainerName("/q", s), ContainerName("/r", Session{Role: "guard", Dir: s.Dir}), ContainerName("/r", Session{Role: "agent", Dir: "/r/.runner/iterations/run-1/0008"})} {
		if other == name {
			t.Errorf("two sessions share the name %q", name)
		}
	}
	odd := ContainerName("/r", Session{Role: "agent", Dir: "/r/x y/" + strings.Repeat("z", 90)})
	if strings.ContainsAny(odd, " /") || len(odd) > 100 {
		t.Errorf("ContainerName of an odd directory = %q", odd)
	}
	if RepoLabel("/r") == RepoLabel("/q") || RepoLabel("/r") != RepoLabel("/r/") {
		t.Error("RepoLabel does not tell repositories apart by their root")
	}
}

// TestCreateArgs: the container's command line, engine-free: read-only
// root, no capabilities, the caller's uid:gid, the mounts in the order of
// bwrap's, the environment by name only, the command shown when hidden.
func TestCreateArgs(t *testing.T) {
	root := repo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	agentBin := filepath.Join(t.TempDir(), "agent")
	if err := os.WriteFile(agentBin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(home, "notes")
	if err := os.WriteFile(notes, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := cfg()
	c.Mode, c.Network, c.Readable = config.SandboxDocker, config.NetworkNone, []string{"~/notes", "~/missing"}
	state := filepath.Join(root, ".runner", "state")
	conf := filepath.Join(state, "config.toml")
	if err := os.WriteFile(conf, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cf, err := Open(c, root, []string{state}, []string{conf}, Session{Role: "agent", Dir: filepath.Join(root, ".runner", "iterations", "r", "0001")})
	if err != nil {
		t.Fatal(err)
	}
	ct := cf.(*Container)
	args, err := ct.CreateArgs("n", []string{agentBin, "--flag"}, []string{"SECRET=s3cret", "PATH=/usr/bin", "TMPDIR=/var/tmp", "SECRET=again"})
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(args, " ")
	id := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	for _, want := range []string{
		"--read-only", "--cap-drop ALL", "--security-opt no-new-privileges", "--network none", "--user " + id,
		"--rm", "--init", "--pull never", "--workdir " + root, "--tmpfs /tmp:", "--tmpfs " + home + ":",
		"--env SECRET --env PATH --env TMPDIR=/tmp --entrypoint " + agentBin + " treeloop-host --flag",
		"--label " + LabelRepo + "=" + RepoLabel(root),
	} {
		if !strings.Contains(line, want) {
			t.Errorf("create arguments lack %q:\n%s", want, line)
		}
	}
	if strings.Contains(line, "s3cret") || strings.Count(line, "--env SECRET") != 1 {
		t.Errorf("the environment's values are in the command line, or a name twice:\n%s", line)
	}
	var mounts []string
	for i, a := range args {
		if a == "--mount" {
			mounts = append(mounts, args[i+1])
		}
	}
	want := []string{
		"type=bind,source=/usr,target=/usr,readonly",
		"type=bind,source=/etc,target=/etc,readonly",
		"type=bind,source=" + notes + ",target=" + notes + ",readonly",
		"type=bind,source=" + agentBin + ",target=" + agentBin + ",readonly",
		"type=bind,source=" + root + ",target=" + root,
		"type=bind,source=" + filepath.Join(root, ".git") + ",target=" + filepath.Join(root, ".git") + ",readonly",
		"type=bind,source=" + filepath.Join(root, ".runner") + ",target=" + filepath.Join(root, ".runner") + ",readonly",
		"type=bind,source=" + state + ",target=" + state,
		"type=bind,source=" + conf + ",target=" + conf + ",readonly",
	}
	mounts = slices.DeleteFunc(mounts, func(m string) bool { return strings.Contains(m, "source=/lib") || strings.Contains(m, "source=/bin") })
	if !slices.Equal(mounts, want) {
		t.Errorf("mounts:\n%s\nwant:\n%s", strings.Join(mounts, "\n"), strings.Join(want, "\n"))
	}

	// An image of its own: its own programs, on its own PATH; no host
	// directories.
	c.Image = "agents:1"
	cf, err = Open(c, root, nil, nil, Session{Role: "guard", Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	args, err = cf.(*Container).CreateArgs("n", []string{"claude", "-p"}, []string{"PATH=/usr/bin", "HOME=" + home})
	if err != nil {
		t.Fatal(err)
	}
	line = strings.Join(args, " ")
	if strings.Contains(line, "source=/usr") || strings.Contains(line, "--env PATH") || !strings.HasSuffix(line, "--env HOME --env TMPDIR=/tmp --entrypoint claude agents:1 -p") {
		t.Errorf("create arguments for an image of its own:\n%s", line)
	}
}

func TestCreateArgsRefuses(t *testing.T) {
	root := repo(t)
	c := cfg()
	c.Mode = config.SandboxDocker
	cf, err := Open(c, root, nil, nil, Session{Role: "agent", Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	var se *proc.StartError
	if _, err := cf.(*Container).CreateArgs("n", []string{"no-such-agent-cli"}, nil); !errors.As(err, &se) || se.Name != "no-such-agent-cli" {
		t.Errorf("CreateArgs(missing command) = %v, want a StartError naming it", err)
	}
	odd := filepath.Join(t.TempDir(), "a,b")
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	c.Writable = []string{odd}
	cf, _ = Open(c, root, nil, nil, Session{Role: "agent", Dir: root})
	if _, err := cf.(*Container).CreateArgs("n", []string{"sh"}, nil); err == nil || !strings.Contains(err.Error(), "comma") {
		t.Errorf("CreateArgs with a writable path holding a comma = %v", err)
	}
	if _, err := Open(cfg(), root, nil, nil, Session{}); err == nil {
		t.Error("Open of mode none gave a confiner")
	}
	c.Writable = nil
	if cf, err = Open(c, root, nil, nil, Session{Role: "agent", Dir: root}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := cf.Wrap([]string{"/bin/sh"}, nil); !errors.As(err, &se) || se.Name != "docker" {
		t.Errorf("Wrap without docker on PATH = %v, want a StartError naming docker", err)
	}
}

// TestSkeleton: the default image's file system mounts the host's /usr and
// /etc, keeps a real /sbin (the engine's init is mounted there) and a /tmp
// for everyone, and links /bin, /lib... as the host does.
func TestSkeleton(t *testing.T) {
	data, err := Skeleton()
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]*tar.Header{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries[strings.TrimSuffix(h.Name, "/")] = h
	}
	for _, d := range []string{"usr", "etc", "sbin", "proc", "dev"} {
		if h := entries[d]; h == nil || h.Typeflag != tar.TypeDir {
			t.Errorf("%s is not a directory in the skeleton", d)
		}
	}
	if h := entries["tmp"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("tmp = %+v, want mode 1777", h)
	}
	if target, err := os.Readlink("/bin"); err == nil {
		if h := entries["bin"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != target {
			t.Errorf("bin = %+v, want a link to %s as on the host", h, target)
		}
	}
}

// TestContainerRuns runs a real command in a docker container (podman in
// TestContainerRunsPodman): it writes the repository as the caller, cannot
// write the runner's files or .git, does not see the home directory or the
// host's processes; network none leaves only the loopback device; Release
// leaves no container.
func TestContainerRuns(t *testing.T)       { containerRuns(t, config.EngineDocker) }
func TestContainerRunsPodman(t *testing.T) { containerRuns(t, config.EnginePodman) }

func containerRuns(t *testing.T, engine string) {
	c := engineCfg(t, engine)
	root := repo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	if err := os.WriteFile(filepath.Join(home, "secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".runner", "state", "config.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.Network = config.NetworkNone
	dir := filepath.Join(root, ".runner", "iterations", "run-t", "0001")
	cf, err := Open(c, root, nil, nil, Session{Role: "test", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	script := `echo "$GREETING" > in-repo.txt
{ echo x > .runner/state/config.toml; } 2>/dev/null && echo runner-written
{ echo x > .git/config; } 2>/dev/null && echo git-written
cat "$HOME/secret" 2>/dev/null
cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' ' | grep -q 'sandbox[.]test' && echo host-processes-visible
tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`
	env := append(os.Environ(), "GREETING=hello")
	argv, err := cf.Wrap([]string{"sh", "-c", script}, env)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Release()
	var log bytes.Buffer
	res, err := proc.Run(context.Background(), proc.Spec{Argv: argv, Env: env, Log: &log})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v, exit %d: %s", err, res.ExitCode, log.String())
	}
	if got := strings.TrimSpace(log.String()); got != "lo" {
		t.Errorf("output = %q, want only the loopback device listed", got)
	}
	st, err := os.Stat(filepath.Join(root, "in-repo.txt"))
	if b, _ := os.ReadFile(filepath.Join(root, "in-repo.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("in-repo.txt = %q, %v", b, err)
	}
	if sys := st.Sys().(*syscall.Stat_t); int(sys.Uid) != os.Getuid() || int(sys.Gid) != os.Getgid() {
		t.Errorf("in-repo.txt belongs to %d:%d, not to the caller", sys.Uid, sys.Gid)
	}
	if err := cf.Release(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(engine, "ps", "--all", "--quiet", "--filter", "name="+ContainerName(root, Session{Role: "test", Dir: dir})).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("after Release: %s ps = %q, %v", engine, out, err)
	}
}

// TestContainerStartErrors: an image that is not there is a StartError
// naming the engine, before anything runs; nothing is left behind.
func TestContainerStartErrors(t *testing.T) {
	c := engineCfg(t, config.EngineDocker)
	c.Image = "treeloop-no-such-image:0"
	root := repo(t)
	cf, err := Open(c, root, nil, nil, Session{Role: "test", Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	var se *proc.StartError
	if _, err := cf.Wrap([]string{"sh", "-c", "true"}, os.Environ()); !errors.As(err, &se) || se.Name != "docker" || !strings.Contains(err.Error(), "create the container") {
		t.Errorf("Wrap with a missing image = %v, want a StartError naming docker", err)
	}
	if err := cf.Release(); err != nil {
		t.Errorf("Release after a failed create: %v", err)
	}
	if ps := CheckEngine(c); len(ps) != 1 || !strings.Contains(ps[0], "treeloop-no-such-image:0 is not in docker") {
		t.Errorf("CheckEngine(missing image) = %q", ps)
	}
}

// TestRemoveLeftovers: a container whose client was killed runs on;
// RemoveLeftovers finds it by the repository's label and removes it.
func TestRemoveLeftovers(t *testing.T) {
	c := engineCfg(t, config.EngineDocker)
	root := repo(t)
	cf, err := Open(c, root, nil, nil, Session{Role: "test", Dir: filepath.Join(root, "left")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cf.Wrap([]string{"sleep", "600"}, os.Environ()); err != nil {
		t.Fatal(err)
	}
	// Created, not started: a leftover all the same.
	if n, err := RemoveLeftovers(c, root); err != nil || n != 1 {
		t.Errorf("RemoveLeftovers = %d, %v; want 1 removed", n, err)
	}
	if n, err := RemoveLeftovers(c, root); err != nil || n != 0 {
		t.Errorf("RemoveLeftovers again = %d, %v; want none", n, err)
	}
	if err := cf.Release(); err != nil {
		t.Errorf("Release of a removed container: %v", err)
	}
}

// BenchmarkDocker and BenchmarkPodman give a container's cost per session
// (beside BenchmarkDirect and BenchmarkBwrap): create, start attached,
// `true`, remove.
func BenchmarkDocker(b *testing.B) { benchContainer(b, config.EngineDocker) }
func BenchmarkPodman(b *testing.B) { benchContainer(b, config.EnginePodman) }

func benchContainer(b *testing.B, engine string) {
	c := engineCfg(b, engine)
	root := repo(b)
	env := os.Environ()
	b.ResetTimer()
	for b.Loop() {
		cf, err := Open(c, root, []string{filepath.Join(root, ".runner", "state")}, nil, Session{Role: "bench", Dir: root})
		if err != nil {
			b.Fatal(err)
		}
		argv, err := cf.Wrap([]string{"true"}, env)
		if err != nil {
			b.Fatal(err)
		}
		res, err := proc.Run(context.Background(), proc.Spec{Argv: argv, Dir: root, Env: env})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v, exit %d", err, res.ExitCode)
		}
		if err := cf.Release(); err != nil {
			b.Fatal(err)
		}
	}
}
