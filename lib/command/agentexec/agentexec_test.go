package agentexec

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/agent"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/iterdir"
)

// A session whose CLI reports tokens but no cost is priced at the model
// asked for, else at the one the CLI named; a reported cost, no tokens or
// no price leave it as it is.
func TestPriceUsage(t *testing.T) {
	prices := map[string]config.Price{"big": {Input: 10, Output: 20}, "cli-model": {Input: 1, Output: 1}}
	tests := []struct {
		model, reported string
		usage           iterdir.Usage
		priced          bool
		cost            float64
	}{
		{"big", "", iterdir.Usage{InputTokens: 1e6, OutputTokens: 1e6}, true, 30},
		{"", "cli-model", iterdir.Usage{InputTokens: 2e6}, true, 2},
		{"big", "", iterdir.Usage{InputTokens: 1e6, CostUSD: 0.5}, false, 0.5},
		{"big", "", iterdir.Usage{}, false, 0},
		{"unknown", "", iterdir.Usage{InputTokens: 1e6}, false, 0},
	}
	for _, tt := range tests {
		res := agent.Result{Usage: tt.usage, Model: tt.reported}
		got := priceUsage(&res, config.Agent{Model: tt.model, Prices: prices})
		if got != tt.priced || math.Abs(res.Usage.CostUSD-tt.cost) > 1e-9 {
			t.Errorf("priceUsage(%s, %+v) = %v, $%v; want %v, $%v", tt.model, tt.usage, got, res.Usage.CostUSD, tt.priced, tt.cost)
		}
	}
}

// TestConfinement: the agent's seal is told the sandbox and the runner
// files the sandbox leaves writable (the state and node directories, the
// output files in the iteration's directory), the same confine opens;
// unconfined, nothing.
func TestConfinement(t *testing.T) {
	cfg := config.Default()
	if c := confinement(cfg, "/r", "/r/.runner/iterations/x/0001", "/r/.runner/iterations/x/0001/output.json"); c.Sandbox.Confined() {
		t.Errorf("mode none: %+v", c)
	}
	cfg.Sandbox.Mode = config.SandboxBwrap
	c := confinement(cfg, "/r", "/r/.runner/iterations/x/0001", "/r/.runner/iterations/x/0001/output.json")
	want := writable(cfg, "/r", "/r/.runner/iterations/x/0001", "/r/.runner/iterations/x/0001/output.json")
	if !c.Sandbox.Confined() || c.Root != "/r" || strings.Join(c.Writable, " ") != strings.Join(want, " ") ||
		!strings.Contains(strings.Join(want, " "), "/r/.runner/state /r/.runner/nodes /r/.runner/iterations/x/0001/output.json") {
		t.Errorf("bwrap: %+v", c)
	}
}

// TestMissingDirs: the directories MkdirAll would make below the root,
// deepest first; none when the directory exists; never the root or above.
func TestMissingDirs(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".runner"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".runner", "nodes", "n1", "artifacts")
	got := missingDirs(dir, root)
	want := []string{dir, filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("missingDirs = %q, want %q", got, want)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := missingDirs(dir, root); len(got) != 0 {
		t.Fatalf("an existing directory: %q", got)
	}
	if got := missingDirs(filepath.Join(root+"x", "a"), root); len(got) != 0 {
		t.Fatalf("outside the root: %q", got)
	}
}

// TestRemoveMade: the directories made for a session go when it left them
// empty; one it filled stays with its parents, and one it swapped for a
// symlink stays as the session left it, the symlink's target untouched.
func TestRemoveMade(t *testing.T) {
	setup := func(t *testing.T) (root, artifacts string, made []madeDir) {
		root = t.TempDir()
		artifacts = filepath.Join(root, ".runner", "nodes", "n1", "artifacts")
		missing := missingDirs(artifacts, root)
		if err := os.MkdirAll(artifacts, 0o755); err != nil {
			t.Fatal(err)
		}
		return root, artifacts, madeDirs(missing)
	}
	t.Run("empty", func(t *testing.T) {
		root, _, made := setup(t)
		removeMade(made)
		if _, err := os.Lstat(filepath.Join(root, ".runner")); !os.IsNotExist(err) {
			t.Fatalf(".runner is still there: %v", err)
		}
	})
	t.Run("filled", func(t *testing.T) {
		_, artifacts, made := setup(t)
		if err := os.WriteFile(filepath.Join(artifacts, "plan.md"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		removeMade(made)
		if _, err := os.Stat(filepath.Join(artifacts, "plan.md")); err != nil {
			t.Fatalf("the artifact went: %v", err)
		}
	})
	t.Run("swapped", func(t *testing.T) {
		_, artifacts, made := setup(t)
		outside := t.TempDir()
		if err := os.Mkdir(filepath.Join(outside, "artifacts"), 0o755); err != nil {
			t.Fatal(err)
		}
		node := filepath.Dir(artifacts)
		if err := os.RemoveAll(node); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, node); err != nil {
			t.Fatal(err)
		}
		removeMade(made)
		if _, err := os.Stat(filepath.Join(outside, "artifacts")); err != nil {
			t.Fatalf("the symlink's target lost its directory: %v", err)
		}
		if st, err := os.Lstat(node); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the symlink went: %v", err)
		}
	})
}
