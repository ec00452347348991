package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// TestProbe: with no command the dry run checks the output files alone:
// a writable one passes, one the sandbox keeps read-only fails naming the
// files' check and no command; a command that exits non-zero is named.
func TestProbe(t *testing.T) {
	root := repo(t)
	out := filepath.Join(root, ".runner", "state", "output.json")
	c := cfg()
	c.Mode = config.SandboxBwrap
	s, err := New(c, root, []string{filepath.Join(root, ".runner", "state")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Probe([]string{out}, nil); err != nil {
		t.Fatalf("Probe of a writable file: %v", err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the output file was not written: %v", err)
	}
	err = s.Probe([]string{out, "/usr/treeloop-probe"}, nil)
	var pe *ProbeError
	if !errors.As(err, &pe) || pe.What != "writing the session's output files" || pe.Argv != nil ||
		!strings.HasPrefix(err.Error(), "a dry run under the sandbox failed at writing the session's output files: ") || !strings.Contains(err.Error(), "/usr/treeloop-probe") {
		t.Fatalf("Probe of a read-only file: %v", err)
	}
	fail := []string{"sh", "-c", "exit 3"}
	err = s.Probe([]string{out}, fail)
	if !errors.As(err, &pe) || pe.What != "`sh -c exit 3`" || !slices.Equal(pe.Argv, fail) ||
		err.Error() != "a dry run under the sandbox failed at `sh -c exit 3`: exit status 3" {
		t.Fatalf("Probe of a failing command: %v", err)
	}
	if err := s.Probe(nil, []string{"true"}); err != nil {
		t.Fatalf("Probe of a command that passes: %v", err)
	}
}

// TestProbeKey: the key lies in the user's cache directory and changes
// with the configuration and with the agent's executable (found or not,
// its size); the same inputs give the same key; no cache directory, no
// key.
func TestProbeKey(t *testing.T) {
	cache, bin := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	c := config.Default()
	missing := ProbeKey(c, "treeloop-test-cli")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(filepath.Join(cache, "treeloop", "sandbox-probe")) + `/[0-9a-f]{32}$`).MatchString(missing) {
		t.Fatalf("ProbeKey = %q", missing)
	}
	writeExec(t, filepath.Join(bin, "treeloop-test-cli"), "#!/bin/sh\n")
	found := ProbeKey(c, "treeloop-test-cli")
	if found == missing || ProbeKey(c, "treeloop-test-cli") != found {
		t.Fatalf("with the executable %q, without %q", found, missing)
	}
	writeExec(t, filepath.Join(bin, "treeloop-test-cli"), "#!/bin/sh\nexit 0\n")
	if k := ProbeKey(c, "treeloop-test-cli"); k == found {
		t.Error("the key did not change with the executable's size")
	}
	c.Sandbox.Readable = []string{"~/.x"}
	if k := ProbeKey(c, "treeloop-test-cli"); k == found || filepath.Dir(k) != filepath.Dir(found) {
		t.Errorf("another configuration: %q", k)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "")
	if k := ProbeKey(c, "treeloop-test-cli"); k != "" {
		t.Errorf("no cache directory: %q", k)
	}
}

// TestProgramPathsLinkedInterpreter: a script's interpreter that is a
// link is shown with where it leads.
func TestProgramPathsLinkedInterpreter(t *testing.T) {
	dir := t.TempDir()
	writeExec(t, dir+"/toolchain/real/py", "#!/bin/sh\n")
	if err := os.MkdirAll(dir+"/toolchain/bin", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../real/py", dir+"/toolchain/bin/py"); err != nil {
		t.Fatal(err)
	}
	writeExec(t, dir+"/repo/run", "#!"+dir+"/toolchain/bin/py\n")
	want := []string{dir + "/repo/run", dir + "/toolchain/bin/py", dir + "/toolchain/real/py"}
	if got := ProgramPaths(dir+"/repo", "./run"); !slices.Equal(got, want) {
		t.Errorf("ProgramPaths = %q, want %q", got, want)
	}
}

// TestServices: the runtime directory is hidden whole, so a socket in it
// is not named again; a socket in the home is hidden with the home (when
// there is one); one elsewhere is hidden by itself.
func TestServices(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "sandbox-services-")
	if err != nil { // outside /tmp, which the sandbox hides whole
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	home, runtime := filepath.Join(base, "home"), filepath.Join(base, "runtime")
	inHome, inRuntime, alone := filepath.Join(home, "s.sock"), filepath.Join(runtime, "bus"), filepath.Join(base, "engine.sock")
	for _, p := range []string{inHome, inRuntime, alone} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	saved := ServiceSockets
	ServiceSockets = []string{inHome, inRuntime, alone, filepath.Join(base, "missing.sock")}
	t.Cleanup(func() { ServiceSockets = saved })
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	t.Setenv("DOCKER_HOST", "")
	root := repo(t)
	if rt, sockets := services(root, home); rt != runtime || !slices.Equal(sockets, []string{alone}) {
		t.Errorf("services = %q %q, want %q [%q]", rt, sockets, runtime, alone)
	}
	if rt, sockets := services(root, ""); rt != runtime || !slices.Equal(sockets, []string{inHome, alone}) {
		t.Errorf("services with no home = %q %q", rt, sockets)
	}
}
