package sandbox

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrapHidesServices: under bwrap a service's socket (here one of
// the test's, and the container engine's where one runs) is /dev/null,
// so nothing can connect to it, and the user's runtime directory is empty;
// a readable path that shows the socket again takes the run's earlier
// iterations out of Shields (a session could start a container that
// writes them).
func TestWrapHidesServices(t *testing.T) {
	base, err := os.MkdirTemp("/var/tmp", "sandbox-services-")
	if err != nil { // outside /tmp, which the sandbox hides whole
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	sock := filepath.Join(base, "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	runtime := filepath.Join(base, "runtime")
	if err := os.MkdirAll(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runtime, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	saved := ServiceSockets
	ServiceSockets = append([]string{sock}, saved...)
	t.Cleanup(func() { ServiceSockets = saved })
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	root := repo(t)
	s, err := New(cfg(), root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	script := `[ -S "$1" ] && echo "socket shown: $1"; [ -e "$2/bus" ] && echo "runtime shown"
[ -S /run/docker.sock ] && echo "docker's socket shown"; true`
	argv, err := s.Wrap([]string{"sh", "-c", script, "sh", sock, runtime})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("bwrap: %v\n%s", err, out)
	}
	// Outside, the socket is a socket: what hid it was the sandbox.
	if st, err := os.Stat(sock); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("the test's socket: %v %v", st, err)
	}
	run := filepath.Join(root, ".runner", "iterations", "run-1")
	if err := os.MkdirAll(filepath.Join(run, "0002"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := cfg()
	c.Mode = "bwrap"
	if !Shields(c, root, run, filepath.Join(run, "0002"), nil) {
		t.Fatal("not shielded")
	}
	for _, shown := range []string{base, sock, runtime, filepath.Join(runtime, "bus")} {
		c.Readable = []string{shown}
		if Shields(c, root, run, filepath.Join(run, "0002"), nil) {
			t.Errorf("readable %s: shielded", strings.TrimPrefix(shown, base))
		}
	}
}
