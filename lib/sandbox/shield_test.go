package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// TestShields: a run's earlier iterations are out of a confined session's
// reach unless a writable path opens them (in them, or between the
// runner's files and them) or a symbolic link leads elsewhere; the
// session's own files in the current iteration do not.
func TestShields(t *testing.T) {
	root := repo(t)
	run := filepath.Join(root, ".runner", "iterations", "run-1")
	cur := filepath.Join(run, "0003")
	for _, d := range []string{filepath.Join(run, "0001"), filepath.Join(run, "0002"), cur} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(cur, "output.json")
	link := filepath.Join(t.TempDir(), "to-iterations")
	if err := os.Symlink(filepath.Join(run, "0001"), link); err != nil {
		t.Fatal(err)
	}
	bwrap, docker, none := cfg(), cfg(), cfg()
	bwrap.Mode, docker.Mode = config.SandboxBwrap, config.SandboxDocker
	with := func(c config.Sandbox, writable ...string) config.Sandbox { c.Writable = writable; return c }
	for _, c := range []struct {
		name     string
		cfg      config.Sandbox
		root     string
		writable []string
		want     bool
	}{
		{"bwrap", bwrap, root, []string{filepath.Join(root, ".runner", "state"), out}, true},
		{"docker", docker, root, []string{out}, true},
		{"none", none, root, nil, false},
		{"writable root", with(bwrap, root), root, nil, true},
		{"writable parent of the root", with(bwrap, filepath.Dir(root)), root, nil, true},
		{"writable home path", with(bwrap, "~/.cache"), root, nil, true},
		{"writable earlier iteration", with(docker, filepath.Join(run, "0001")), root, nil, false},
		{"writable runner files", with(bwrap, filepath.Join(root, ".runner")), root, nil, false},
		{"writable run directory", bwrap, root, []string{run}, false},
		{"writable link into an earlier iteration", with(bwrap, link), root, nil, false},
		{"another root", bwrap, filepath.Join(root, "sub"), nil, false},
	} {
		if got := Shields(c.cfg, c.root, run, cur, c.writable); got != c.want {
			t.Errorf("%s: Shields = %v, want %v", c.name, got, c.want)
		}
	}
	// A run directory reached through a link is not shielded: the link's
	// target may lie anywhere.
	elsewhere := filepath.Join(root, "elsewhere")
	if err := os.Rename(run, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, run); err != nil {
		t.Fatal(err)
	}
	if Shields(bwrap, root, run, cur, nil) {
		t.Error("a run directory that is a link into the work tree is shielded")
	}
}

// TestShieldsBwrap: what Shields says is what bwrap does: an earlier
// iteration's log cannot be written, replaced, removed or linked into the
// work tree by the confined command, while the session's own output file
// can be written.
func TestShieldsBwrap(t *testing.T) {
	root := repo(t)
	run := filepath.Join(root, ".runner", "iterations", "run-1")
	old, cur := filepath.Join(run, "0001"), filepath.Join(run, "0002")
	for _, d := range []string{old, cur} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log, out := filepath.Join(old, "agent.json"), filepath.Join(cur, "output.json")
	for _, f := range []string{log, out} {
		if err := os.WriteFile(f, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := cfg()
	c.Mode = config.SandboxBwrap
	writable := []string{filepath.Join(root, ".runner", "state"), out}
	if !Shields(c, root, run, cur, writable) {
		t.Fatal("not shielded")
	}
	sb, err := New(c, root, writable, nil)
	if err != nil {
		t.Fatal(err)
	}
	script := `for try in "echo forged > $1" "mv $1 $1.x" "rm -f $1" "ln $1 hard" "touch $2/new" "rm -rf $2" "mv $2 moved"; do
  if sh -c "$try" 2>/dev/null; then echo "allowed: $try"; fi
done
echo '{"ok":1}' > $3 || echo "output refused"`
	argv, err := sb.Wrap([]string{"bash", "-c", script, "forge", log, old, out})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = root
	got, err := cmd.CombinedOutput()
	if err != nil || len(got) > 0 {
		t.Fatalf("bwrap: %v\n%s", err, got)
	}
	if data, _ := os.ReadFile(log); string(data) != "{}\n" {
		t.Errorf("the earlier log holds %q", data)
	}
	if data, _ := os.ReadFile(out); string(data) != "{\"ok\":1}\n" {
		t.Errorf("the output holds %q", data)
	}
}
