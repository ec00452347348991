package testscripts

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// The README's configuration table gives the [sandbox] defaults the code
// has, and the container sections name the files that implement them and
// the logins the loop's container gets.
func TestReadmeSandbox(t *testing.T) {
	root := repoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	d := config.Default().Sandbox
	for key, want := range map[string]string{
		"mode": strconv.Quote(d.Mode), "engine": strconv.Quote(d.Engine), "image": strconv.Quote(d.Image),
		"guard": strconv.FormatBool(d.Guard), "network": strconv.Quote(d.Network),
	} {
		row := "| `[sandbox] " + key + "` | `" + want + "` |"
		if !strings.Contains(string(readme), row) {
			t.Errorf("README's configuration table has no row %s", row)
		}
	}
	// The logins tools/docker-loop mounts are the ones the README names.
	script, err := os.ReadFile(filepath.Join(root, "tools", "docker-loop"))
	if err != nil {
		t.Fatal(err)
	}
	_, loop, ok := strings.Cut(string(script), "\nfor p in ")
	if !ok {
		t.Fatal("tools/docker-loop: no `for p in` list of logins")
	}
	loop, _, _ = strings.Cut(loop, ";")
	for _, p := range strings.Fields(loop) {
		if !strings.Contains(string(readme), "`~/"+p+"`") {
			t.Errorf("README does not name the login ~/%s that tools/docker-loop mounts", p)
		}
	}
	for _, f := range []string{"Dockerfile", "compose.yaml", "tools/docker-loop", "examples/podman/containers.conf",
		"testscripts/loop-sandbox-docker.txtar", "testscripts/loop-sandbox-docker-ends.txtar", "testscripts/loop-sandbox-podman.txtar"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("README names %s: %v", f, err)
		}
		if !strings.Contains(string(readme), filepath.Base(f)) {
			t.Errorf("README does not name %s", f)
		}
	}
}
