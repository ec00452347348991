package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// bound lists argv's mounts and options as "flag a b" strings, up to
// "--": what the command sees, in order.
func bound(argv []string) []string {
	var out []string
	two := map[string]bool{"--ro-bind": true, "--ro-bind-try": true, "--bind": true, "--bind-try": true, "--setenv": true}
	for i := 1; i < len(argv) && argv[i] != "--"; i++ {
		switch {
		case two[argv[i]]:
			out = append(out, strings.Join(argv[i:i+3], " "))
			i += 2
		case argv[i] == "--dev" || argv[i] == "--proc" || argv[i] == "--tmpfs" || argv[i] == "--chdir" || argv[i] == "--cap-drop":
			out = append(out, argv[i]+" "+argv[i+1])
			i++
		default:
			out = append(out, argv[i])
		}
	}
	return out
}

// noServices makes the host look like one with no service to hide
// (services.go), so that a mount list does not depend on the machine.
func noServices(t *testing.T) {
	t.Helper()
	saved := ServiceSockets
	ServiceSockets = nil
	t.Cleanup(func() { ServiceSockets = saved })
	t.Setenv("XDG_RUNTIME_DIR", "/nonexistent-runtime-dir")
	t.Setenv("DOCKER_HOST", "")
}

// TestWrapMounts: the whole mount list in order, from a configuration with
// readable and writable places in and out of the home directory, and
// runner files that exist or not.
func TestWrapMounts(t *testing.T) {
	noServices(t)
	root := repo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	state := filepath.Join(root, ".runner", "state")
	out := filepath.Join(root, ".runner", "out.json")
	cfgFile := filepath.Join(state, "config.toml")
	for _, f := range []string{out, cfgFile} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := cfg()
	c.Readable = []string{"~/.config/cli", "/opt/x/"}
	c.Writable = []string{"~/.cache/go", "/var/tmp/w"}
	c.Network = config.NetworkNone
	s, err := New(c, root, []string{state, out, filepath.Join(root, ".runner", "missing")}, []string{cfgFile, filepath.Join(state, "run_state.json")})
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := exec.LookPath("sh")
	argv, err := s.Wrap([]string{"sh", "-c", "true"})
	if err != nil {
		t.Fatal(err)
	}
	bw, _ := exec.LookPath(Bin)
	if argv[0] != bw || !slices.Equal(argv[len(argv)-4:], []string{"--", sh, "-c", "true"}) {
		t.Fatalf("argv: %q", argv)
	}
	git := filepath.Join(root, ".git")
	want := []string{
		"--ro-bind / /", "--dev /dev", "--proc /proc", "--tmpfs /tmp", "--setenv TMPDIR /tmp",
		"--tmpfs " + home,
		"--ro-bind-try " + home + "/.config/cli " + home + "/.config/cli", "--ro-bind-try /opt/x /opt/x",
		"--bind-try " + home + "/.cache/go " + home + "/.cache/go", "--bind-try /var/tmp/w /var/tmp/w",
		"--bind " + root + " " + root,
		"--ro-bind-try " + git + " " + git, "--ro-bind-try " + filepath.Join(root, ".runner") + " " + filepath.Join(root, ".runner"),
		"--bind " + state + " " + state, "--bind " + out + " " + out,
		"--ro-bind " + cfgFile + " " + cfgFile,
		"--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop ALL", "--unshare-net", "--chdir " + root,
	}
	if got := bound(argv); !slices.Equal(got, want) {
		t.Errorf("mounts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// With the host's network, no --unshare-net.
	c.Network = config.Default().Sandbox.Network
	if c.Network == config.NetworkNone {
		t.Fatal("the default network is none")
	}
	s, _ = New(c, root, nil, nil)
	if argv, _ := s.Wrap([]string{"true"}); slices.Contains(argv, "--unshare-net") {
		t.Errorf("host network: %q", argv)
	}
}

// TestWrapHome: the home directory is hidden unless it is "/", unknown, or
// lies inside the repository (one that holds the repository is hidden, the
// repository bound back in); "~/" entries need a home to mean anything.
func TestWrapHome(t *testing.T) {
	root := repo(t)
	c := cfg()
	c.Readable = []string{"~/r"}
	for _, x := range []struct {
		name, home string
		hidden     bool
		readable   string // the "~/r" entry as bound, "" when dropped
	}{
		{"a home", t.TempDir(), true, "r"},
		{"the root directory", "/", false, "/r"},
		{"no home", "", false, ""},
		{"a home holding the repository", filepath.Dir(root), true, filepath.Join(filepath.Dir(root), "r")},
		{"a home inside the repository", filepath.Join(root, "home"), false, filepath.Join(root, "home", "r")},
	} {
		t.Run(x.name, func(t *testing.T) {
			t.Setenv("HOME", x.home)
			s, err := New(c, root, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			argv, _ := s.Wrap([]string{"true"})
			mounts := bound(argv)
			hidden := slices.Contains(mounts, "--tmpfs "+x.home)
			if x.home == "" {
				hidden = slices.ContainsFunc(mounts, func(m string) bool { return m != "--tmpfs /tmp" && strings.HasPrefix(m, "--tmpfs ") })
			}
			if hidden != x.hidden {
				t.Errorf("home hidden %v, want %v: %q", hidden, x.hidden, mounts)
			}
			want := x.readable
			if want == "r" {
				want = filepath.Join(x.home, "r")
			}
			found := slices.ContainsFunc(mounts, func(m string) bool { return strings.HasPrefix(m, "--ro-bind-try ") && strings.HasSuffix(m, "/r") })
			if found != (want != "") || want != "" && !slices.Contains(mounts, "--ro-bind-try "+want+" "+want) {
				t.Errorf("~/r bound as %q: %q", want, mounts)
			}
			// The repository is bound after the emptied home, so it is seen.
			if i, j := slices.Index(mounts, "--tmpfs "+x.home), slices.Index(mounts, "--bind "+root+" "+root); j < 0 || i > j {
				t.Errorf("the repository is bound at %d, the home emptied at %d: %q", j, i, mounts)
			}
		})
	}
}

// TestWrapHiddenCommand: a command in a hidden place (the home directory,
// /tmp, /dev/shm) is shown read-only where its path resolves; one
// elsewhere is not bound at all.
func TestWrapHiddenCommand(t *testing.T) {
	noServices(t)
	root := repo(t)
	// A home outside /tmp, which is hidden too.
	home, err := os.MkdirTemp("/var/tmp", "sandbox-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	t.Setenv("HOME", home)
	sh, _ := exec.LookPath("sh")
	real, _ := filepath.EvalSymlinks(sh)
	inHome := filepath.Join(home, "bin", "agent")
	if err := os.MkdirAll(filepath.Dir(inHome), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inHome, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(home, "bin", "link")
	if err := os.Symlink(sh, link); err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg(), root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ exe, shown, runs string }{{inHome, inHome, inHome}, {link, real, real}, {sh, "", sh}}
	// /tmp and /dev/shm (under bwrap's own /dev), where there is one.
	for _, place := range []string{"/tmp", "/dev/shm"} {
		dir, err := os.MkdirTemp(place, "sandbox-tool-")
		if err != nil {
			if place == "/tmp" {
				t.Fatal(err)
			}
			continue
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		tool := filepath.Join(dir, "tool")
		if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct{ exe, shown, runs string }{tool, tool, tool})
	}
	for _, x := range cases {
		exe, want := x.exe, x.shown
		argv, err := s.Wrap([]string{exe})
		if err != nil {
			t.Fatal(err)
		}
		mounts := bound(argv)
		i := slices.Index(mounts, "--bind "+root+" "+root)
		roBinds := slices.DeleteFunc(slices.Clone(mounts[:i]), func(m string) bool { return !strings.HasPrefix(m, "--ro-bind ") || m == "--ro-bind / /" })
		if want == "" && len(roBinds) != 0 || want != "" && !slices.Equal(roBinds, []string{"--ro-bind " + want + " " + want}) {
			t.Errorf("%s: %q", exe, roBinds)
		}
		if got := argv[slices.Index(argv, "--")+1]; got != x.runs {
			t.Errorf("%s runs as %q, want %q", exe, got, x.runs)
		}
	}
	if within("/tmp", "/tmpfoo/x") || !within("/tmp", "/tmp") || !within("/tmp", "/tmp/a/b") || within("/tmp/a", "/tmp") {
		t.Error("within")
	}
}

// TestCheckBroken: a bwrap that cannot create its namespaces is reported
// with the first line of what it said, or its exit status when it said
// nothing.
func TestCheckBroken(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	fake := filepath.Join(dir, Bin)
	for script, want := range map[string]string{
		"#!/bin/sh\necho 'bwrap: No permissions to create new namespace'\necho second line\nexit 1\n": "sandbox: bwrap cannot create its namespaces: bwrap: No permissions to create new namespace (unprivileged",
		"#!/bin/sh\nexit 1\n": "sandbox: bwrap cannot create its namespaces: exit status 1 (",
	} {
		if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		ps := Check()
		if len(ps) != 1 || !strings.HasPrefix(ps[0], want) || strings.Contains(ps[0], "second line") {
			t.Errorf("Check() = %q, want %q…", ps, want)
		}
	}
}

// TestCheckMountRace: a probe that fails while a mount under / goes away
// (a container stopping) is tried again; the check passes when a later
// try does, and names the mount, not user namespaces, when none does.
func TestCheckMountRace(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	fake := filepath.Join(dir, Bin)
	count := filepath.Join(dir, "tries")
	race := `echo 'bwrap: Can'"'"'t bind mount /oldroot/ on /newroot/: Unable to apply mount flags: remount "/newroot/var/lib/docker/overlay2/x/merged": Invalid argument'`
	// FAILS tries fail on the mount, the next passes.
	script := func(fails int) string {
		return fmt.Sprintf("#!/bin/sh\nn=0\n[ -f %[1]s ] && read n < %[1]s\nn=$((n+1))\necho $n > %[1]s\n[ $n -gt %[2]d ] && exit 0\n%[3]s\nexit 1\n", count, fails, race)
	}
	for _, c := range []struct {
		fails int
		want  string
	}{
		{0, ""},
		{checkTries - 1, ""},
		{checkTries, "sandbox: bwrap cannot mount the file system's view: bwrap: Can't bind mount /oldroot/ on /newroot/"},
	} {
		os.Remove(count)
		if err := os.WriteFile(fake, []byte(script(c.fails)), 0o755); err != nil {
			t.Fatal(err)
		}
		ps := Check()
		if c.want == "" && len(ps) != 0 || c.want != "" && (len(ps) != 1 || !strings.HasPrefix(ps[0], c.want) || strings.Contains(ps[0], "namespaces")) {
			t.Errorf("%d failed tries: Check() = %q, want %q", c.fails, ps, c.want)
		}
		data, _ := os.ReadFile(count)
		if got, want := strings.TrimSpace(string(data)), fmt.Sprint(min(c.fails+1, checkTries)); got != want {
			t.Errorf("%d failed tries: the probe ran %s times, want %s", c.fails, got, want)
		}
	}
}

// TestCheckTooOld: a bubblewrap that does not know --json-status-fd
// (before 0.3.2), with which every session would fail to start, is
// named as too old; the real one here knows it (TestCheck).
func TestCheckTooOld(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	old := "#!/bin/sh\necho 'bwrap: Unknown option --json-status-fd' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, Bin), []byte(old), 0o755); err != nil {
		t.Fatal(err)
	}
	ps := Check()
	if len(ps) != 1 || !strings.HasPrefix(ps[0], "sandbox: this bwrap is too old: bwrap: Unknown option --json-status-fd (bubblewrap 0.3.2 or later") {
		t.Errorf("Check() = %q, want the version named", ps)
	}
}
