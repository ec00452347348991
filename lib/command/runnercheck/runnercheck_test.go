package runnercheck

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// repo is a git repository, with a .runner directory when runner is set.
func repo(t *testing.T, runner bool) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if runner {
		if err := os.MkdirAll(filepath.Join(root, ".runner", "state"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestNoRunner: a repository runner-init has not set up is refused with
// what to do.
func TestNoRunner(t *testing.T) {
	code, _, errs := run(t, "-C", repo(t, false))
	if code != 1 || !strings.Contains(errs, "run runner-init --goal GOAL.md") {
		t.Fatalf("exit %d, stderr %q; want 1 and what to run", code, errs)
	}
}

// TestInvalidConfig: a configuration that cannot be loaded fails the
// config check and skips the others, in the text and the --json report.
func TestInvalidConfig(t *testing.T) {
	root := repo(t, true)
	if err := os.WriteFile(filepath.Join(root, ".runner", "state", "config.toml"), []byte("[agent]\nbackend = 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := run(t, "-C", root)
	if code != 1 || !strings.Contains(out, "config: ") || !strings.Contains(out, "agent: skipped: config invalid") || strings.Contains(out, "config: ok") {
		t.Fatalf("exit %d, stdout %q; want 1, a config problem and the agent check skipped", code, out)
	}
	code, out, _ = run(t, "-C", root, "--json")
	var rep struct {
		OK     bool `json:"ok"`
		Checks []struct {
			Name     string   `json:"name"`
			OK       bool     `json:"ok"`
			Skipped  string   `json:"skipped"`
			Problems []string `json:"problems"`
		} `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v: %s", err, out)
	}
	if code != 1 || rep.OK || len(rep.Checks) < 2 || rep.Checks[0].Name != "config" || len(rep.Checks[0].Problems) == 0 || rep.Checks[1].Skipped != "config invalid" {
		t.Fatalf("--json exit %d: %+v", code, rep)
	}
}
