package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/proc"
)

// mountGone is bubblewrap's line when a mount under / went away while it
// copied the file system's view (a container stopping).
const mountGone = "bwrap: Can't bind mount /oldroot/var/lib/docker/overlay2/abc/merged on /newroot/var/lib/docker/overlay2/abc/merged: No such file or directory"

// TestNeverRan: only a report without an exit code and output that is
// bubblewrap's mount line alone say the command never ran.
func TestNeverRan(t *testing.T) {
	t.Parallel()
	started := `{ "child-pid": 4242, "mnt-namespace": 4026532177 }` + "\n"
	for _, c := range []struct {
		name        string
		report, out string
		want        bool
	}{
		{"mount gone", started, mountGone + "\n", true},
		{"remount refused", started, "bwrap: Unable to apply mount flags: remount \"/newroot/proc/x\": No such file or directory\n", true},
		{"no report at all", "", mountGone, true},
		{"exit code reported", started + `{ "exit-code": 1 }` + "\n", mountGone + "\n", false},
		{"command printed too", started, mountGone + "\nsomething of the command's\n", false},
		{"command not found inside", started, "bwrap: execvp nosuch: No such file or directory\n", false},
		{"another bwrap failure", started, "bwrap: Can't find source path /gone: No such file or directory\n", false},
		{"nothing printed", started, "", false},
	} {
		if got := NeverRan([]byte(c.report), []byte(c.out)); got != c.want {
			t.Errorf("%s: NeverRan = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRestartable: a command line of Wrap reports on descriptor 3 and
// runs under the real bubblewrap, started once when the command ran
// (whatever its exit); a command line that is not bubblewrap's is left
// as it is.
func TestRestartable(t *testing.T) {
	t.Parallel()
	root := repo(t)
	argv := wrapped(t, root, "sh", "-c", "echo ran; exit 3")
	spec := proc.Spec{Argv: argv, OwnNamespace: true, KillEscaped: false}
	Restartable(&spec)
	if spec.Restart == nil || !slices.Equal(spec.Argv[1:3], []string{"--json-status-fd", "3"}) || !slices.Equal(spec.Argv[3:], argv[1:]) {
		t.Fatalf("Restartable: argv %q, restart set %v", spec.Argv, spec.Restart != nil)
	}
	var log strings.Builder
	spec.Log = &log
	res, err := proc.Run(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || res.Starts != 1 || log.String() != "ran\n" {
		t.Errorf("exit %d after %d starts, log %q: want 3 after 1, \"ran\"", res.ExitCode, res.Starts, log.String())
	}

	plain := proc.Spec{Argv: []string{"sh", "-c", "true"}}
	Restartable(&plain)
	if plain.Restart != nil || len(plain.Argv) != 3 {
		t.Errorf("a command line that is not bubblewrap's: %q, restart set %v", plain.Argv, plain.Restart != nil)
	}
}

// TestRestartableMountGone: bubblewrap failing as it does when a mount
// went away (a stand-in that fails once with its line and no exit code
// reported, then runs the real one with the same descriptor 3) costs the
// command nothing: it runs once, and the log says the sandbox was started
// again.
func TestRestartableMountGone(t *testing.T) {
	real, err := exec.LookPath(Bin)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	counter := filepath.Join(dir, "starts")
	stand := "#!/bin/sh\nn=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n+1)) > " + counter + "\n" +
		"if [ \"$n\" = 0 ]; then echo '{ \"child-pid\": 4242 }' >&3; echo \"" + mountGone + "\" >&2; exit 1; fi\n" +
		"exec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, Bin), []byte(stand), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	root := repo(t)
	argv := wrapped(t, root, "sh", "-c", "echo ran >> ran.txt; echo ran")
	spec := proc.Spec{Argv: argv, Dir: root, OwnNamespace: true}
	Restartable(&spec)
	var log strings.Builder
	spec.Log = &log
	res, err := proc.Run(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Starts != 2 {
		t.Fatalf("exit %d after %d starts, want 0 after 2:\n%s", res.ExitCode, res.Starts, log.String())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "ran.txt")); string(b) != "ran\n" {
		t.Errorf("the command ran %q, want once", b)
	}
	want := mountGone + "\n[treeloop] the sandbox did not start the command (" + mountGone + "): starting it again (2 of 3)\nran\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
}

// wrapped is argv wrapped for a sandbox of the default configuration
// around root.
func wrapped(t *testing.T, root string, argv ...string) []string {
	t.Helper()
	s, err := New(cfg(), root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Wrap(argv)
	if err != nil {
		t.Fatal(err)
	}
	return w
}
