package testscripts

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// The configuration table of docs/configuration.md gives the [sandbox]
// defaults the code has, and the container sections (docs/operations.md's
// loop in a container, docs/threat-model.md's sandbox) name the files that
// implement them and the logins the loop's container gets.
func TestReadmeSandbox(t *testing.T) {
	t.Parallel()
	root := repoRoot()
	doc := func(name string) string {
		data, err := os.ReadFile(filepath.Join(root, "docs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	conf, ops, threats := doc("configuration.md"), doc("operations.md"), doc("threat-model.md")
	d := config.Default().Sandbox
	for key, want := range map[string]string{
		"mode": strconv.Quote(d.Mode), "engine": strconv.Quote(d.Engine), "image": strconv.Quote(d.Image),
		"guard": strconv.FormatBool(d.Guard), "network": strconv.Quote(d.Network),
	} {
		row := "| `[sandbox] " + key + "` | `" + want + "` |"
		if !strings.Contains(conf, row) {
			t.Errorf("docs/configuration.md's table has no row %s", row)
		}
	}
	// The logins tools/docker-loop mounts are the ones docs/operations.md names.
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
		if !strings.Contains(ops, "`~/"+p+"`") {
			t.Errorf("docs/operations.md does not name the login ~/%s that tools/docker-loop mounts", p)
		}
	}
	for f, text := range map[string]string{
		"Dockerfile": ops, "compose.yaml": ops, "tools/docker-loop": ops,
		"examples/podman/containers.conf": threats, "testscripts/loop-sandbox-docker.txtar": threats,
		"testscripts/loop-sandbox-docker-ends.txtar": threats, "testscripts/loop-sandbox-podman.txtar": threats,
	} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("the docs name %s: %v", f, err)
		}
		if !strings.Contains(text, filepath.Base(f)) {
			t.Errorf("the docs' container sections do not name %s", f)
		}
	}
}
