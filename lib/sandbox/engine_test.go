package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/proc"
)

// fakeEngine puts a "docker" first on PATH that logs each call (one line
// of its arguments) to the returned file and answers as $FAKE_RM,
// $FAKE_CREATE, $FAKE_PS and $FAKE_INSPECT say.
func fakeEngine(t *testing.T) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	script := `#!/bin/sh
echo "$*" >> "` + log + `"
case "$1" in
create)
  case "$FAKE_CREATE" in fail) printf 'Error: no such image\nmore\n'; exit 125 ;; esac
  echo 0123abcd ;;
rm)
  case "$FAKE_RM" in
  progress) echo "Error response from daemon: removal of container x is already in progress"; exit 1 ;;
  nosuch) echo "Error: No such container: x"; exit 1 ;;
  fail) printf 'Error: permission denied\nsecond line\n'; exit 1 ;;
  esac ;;
container)
  n=$(grep -c '^container inspect' "` + log + `")
  if [ "$n" -le "${FAKE_INSPECT:-0}" ]; then echo 0123abcd; exit 0; fi
  echo "Error: No such object: x"; exit 1 ;;
image)
  case "$2" in inspect) [ -n "$FAKE_OLD" ] || exit 1; echo "$FAKE_OLD" ;; esac ;;
import)
  cat > /dev/null; printf 'Getting image source signatures\nsha256:feed\n' ;;
ps)
  case "$FAKE_PS" in fail) echo "Cannot connect to the Docker daemon"; exit 1 ;; esac
  for id in $FAKE_PS; do echo "$id"; done ;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, k := range []string{"FAKE_RM", "FAKE_CREATE", "FAKE_PS", "FAKE_INSPECT", "FAKE_OLD"} {
		t.Setenv(k, "")
	}
	return log
}

func calls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func fakeContainer(t *testing.T) (*Container, string) {
	t.Helper()
	root := repo(t)
	c := cfg()
	c.Mode, c.Image = config.SandboxDocker, "img:1"
	cf, err := Open(c, root, nil, nil, Session{Role: "agent", Dir: filepath.Join(root, ".runner", "iterations", "r", "0001")})
	if err != nil {
		t.Fatal(err)
	}
	return cf.(*Container), root
}

// TestWrapNamesAndRelease: each Wrap creates a container of its own
// (<name>, <name>-2, ...) and starts it attached; Release removes every
// one, once.
func TestWrapNamesAndRelease(t *testing.T) {
	log := fakeEngine(t)
	ct, _ := fakeContainer(t)
	docker := filepath.Join(filepath.Dir(log), "docker")
	for i, suffix := range []string{"", "-2", "-3"} {
		argv, err := ct.Wrap([]string{"sh", "-c", "true"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{docker, "start", "--attach", "--interactive", ct.name + suffix}; strings.Join(argv, " ") != strings.Join(want, " ") {
			t.Fatalf("Wrap %d: %q, want %q", i+1, argv, want)
		}
		if c := calls(t, log); !strings.HasPrefix(c[i], "create --name "+ct.name+suffix+" ") {
			t.Fatalf("call %d: %q", i+1, c[i])
		}
	}
	if err := ct.Release(); err != nil {
		t.Fatal(err)
	}
	c := calls(t, log)
	if strings.Join(c[3:], "\n") != "rm --force "+ct.name+"\nrm --force "+ct.name+"-2\nrm --force "+ct.name+"-3" {
		t.Fatalf("release calls: %q", c[3:])
	}
	if err := ct.Release(); err != nil || len(calls(t, log)) != 6 {
		t.Fatalf("a second Release removed again: %v %q", err, calls(t, log))
	}
}

// TestWrapCreateFails: a create the engine refuses is a start error in
// the engine's first line; its name is still removed at Release.
func TestWrapCreateFails(t *testing.T) {
	log := fakeEngine(t)
	ct, _ := fakeContainer(t)
	t.Setenv("FAKE_CREATE", "fail")
	var se *proc.StartError
	_, err := ct.Wrap([]string{"sh"}, nil)
	if !errors.As(err, &se) || se.Name != "docker" || !strings.HasSuffix(err.Error(), "create the container: Error: no such image") {
		t.Fatalf("Wrap: %v", err)
	}
	if err := ct.Release(); err != nil || calls(t, log)[1] != "rm --force "+ct.name {
		t.Fatalf("Release: %v %q", err, calls(t, log))
	}
}

// TestReleaseErrors: a removal the engine refuses is Release's error (the
// first one, in the engine's first line) and the others are still
// removed; a container already gone, or in its own removal, is not an
// error once the engine no longer knows it.
func TestReleaseErrors(t *testing.T) {
	log := fakeEngine(t)
	ct, _ := fakeContainer(t)
	for range 2 {
		if _, err := ct.Wrap([]string{"sh"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("FAKE_RM", "fail")
	err := ct.Release()
	if err == nil || err.Error() != "remove the container "+ct.name+": Error: permission denied" {
		t.Fatalf("Release: %v", err)
	}
	if c := calls(t, log); len(c) != 4 || c[3] != "rm --force "+ct.name+"-2" {
		t.Fatalf("calls: %q", c)
	}
	for _, mode := range []string{"nosuch", "progress"} {
		t.Setenv("FAKE_RM", mode)
		// The engine still knows the container twice, then no more.
		t.Setenv("FAKE_INSPECT", "2")
		if err := os.Remove(log); err != nil {
			t.Fatal(err)
		}
		if err := removeContainers("docker", "a"); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if c := calls(t, log); len(c) != 4 || c[0] != "rm --force a" || c[3] != "container inspect --format {{.Id}} a" {
			t.Fatalf("%s: calls %q", mode, c)
		}
	}
}

// TestRemoveLeftoversFake: the repository's containers, found by label,
// are removed; none is no call; a failing listing is the error.
func TestRemoveLeftoversFake(t *testing.T) {
	log := fakeEngine(t)
	root := repo(t)
	c := cfg()
	t.Setenv("FAKE_PS", "id1 id2")
	if n, err := RemoveLeftovers(c, root); err != nil || n != 2 {
		t.Fatalf("RemoveLeftovers: %d %v", n, err)
	}
	want := []string{"ps --all --quiet --filter label=" + LabelRepo + "=" + RepoLabel(root), "rm --force id1 id2"}
	if c := calls(t, log); strings.Join(c, "\n") != strings.Join(want, "\n") {
		t.Fatalf("calls %q", c)
	}
	t.Setenv("FAKE_PS", "")
	if n, err := RemoveLeftovers(c, root); err != nil || n != 0 || len(calls(t, log)) != 3 {
		t.Fatalf("none: %d %v %q", n, err, calls(t, log))
	}
	t.Setenv("FAKE_PS", "fail")
	if _, err := RemoveLeftovers(c, root); err == nil || err.Error() != "list the repository's containers: Cannot connect to the Docker daemon" {
		t.Fatalf("failing list: %v", err)
	}
}

func TestNameSafe(t *testing.T) {
	for in, want := range map[string]string{
		"azAZ09_.-":             "azAZ09_.-",
		"a`b{c@d[e":             "a_b_c_d_e",
		"/:x y":                 "__x_y",
		"é":                     "__",
		strings.Repeat("x", 40): strings.Repeat("x", 40),
		strings.Repeat("y", 41): strings.Repeat("y", 40),
	} {
		if got := nameSafe(in); got != want {
			t.Errorf("nameSafe(%q) = %q, want %q", in, got, want)
		}
	}
	if got := engineMessage([]byte("  first\nsecond\n"), errors.New("exit status 1")); got != "first" {
		t.Errorf("engineMessage: %q", got)
	}
	if got := engineMessage(nil, errors.New("exit status 1")); got != "exit status 1" {
		t.Errorf("engineMessage without output: %q", got)
	}
}

// TestContainerCommand: in the default image a command in a hidden place
// is mounted where its path resolves; one in a readable place or the
// repository is seen as it is; a readable place that does not exist
// shows nothing.
func TestContainerCommand(t *testing.T) {
	root := repo(t)
	home, err := os.MkdirTemp("/var/tmp", "sandbox-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	t.Setenv("HOME", home)
	tools := filepath.Join(home, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(tools, "tool")
	hidden := filepath.Join(home, "hidden")
	for _, p := range []string{tool, hidden, filepath.Join(root, "inrepo")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(home, "link")
	if err := os.Symlink(hidden, link); err != nil {
		t.Fatal(err)
	}
	c := cfg()
	c.Mode, c.Readable = config.SandboxDocker, []string{"~/tools", "~/missing"}
	cf, err := Open(c, root, nil, nil, Session{Role: "agent", Dir: root})
	if err != nil {
		t.Fatal(err)
	}
	ct := cf.(*Container)
	for _, x := range []struct{ name, exe, bind string }{
		{tool, tool, ""},
		{hidden, hidden, hidden},
		{link, hidden, hidden},
		{"./inrepo", filepath.Join(root, "inrepo"), ""},
		{"sh", "", ""},
	} {
		exe, bind, err := ct.command(x.name)
		if x.exe == "" {
			if err != nil || !ct.visible(exe) || bind != "" {
				t.Errorf("%s: %q %q %v", x.name, exe, bind, err)
			}
			continue
		}
		if err != nil || exe != x.exe || bind != x.bind {
			t.Errorf("command(%s) = %q, %q, %v; want %q, %q", x.name, exe, bind, err, x.exe, x.bind)
		}
	}
	if ct.visible(filepath.Join(home, "missing", "x")) {
		t.Error("a readable place that does not exist shows a file")
	}
}

// TestBuildImage: the image is imported from the skeleton, its id the
// engine's last line; an older image of the name is removed, the same one
// is not; a missing engine is named.
func TestBuildImage(t *testing.T) {
	log := fakeEngine(t)
	c := cfg()
	c.Mode, c.Engine = config.SandboxDocker, "docker"
	for _, x := range []struct {
		old string
		rm  bool
	}{{"", false}, {"sha256:feed", false}, {"sha256:0ld", true}} {
		os.Remove(log)
		t.Setenv("FAKE_OLD", x.old)
		id, err := BuildImage(c)
		if err != nil || id != "sha256:feed" {
			t.Fatalf("old %q: %q %v", x.old, id, err)
		}
		cs := calls(t, log)
		if len(cs) < 2 || !strings.HasPrefix(cs[0], "image inspect ") || !strings.HasPrefix(cs[1], "import ") ||
			slices.Contains(cs, "image rm "+x.old) != x.rm || len(cs) != 2+map[bool]int{true: 1}[x.rm] {
			t.Errorf("old %q: calls %q", x.old, cs)
		}
	}
	c.Engine = "no-such-engine"
	if _, err := BuildImage(c); err == nil || !strings.HasPrefix(err.Error(), "no-such-engine is not installed: ") {
		t.Errorf("a missing engine: %v", err)
	}
	if lastLine([]byte("\n \n")) != "" || lastLine([]byte("a\nb\n\n")) != "b" {
		t.Error("lastLine")
	}
}
