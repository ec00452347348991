package runcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/config"
)

// just's options before the recipe are passed on to the probe (those
// with a value with it); an option it does not know stops the probe; the
// recipe and what follows are positional.
func TestJustArgs(t *testing.T) {
	tests := []struct {
		args      []string
		opts, pos string
		ok        bool
	}{
		{[]string{"ci"}, "", "ci", true},
		{[]string{"-f", "x.just", "ci", "-v"}, "-f x.just", "ci -v", true},
		{[]string{"--justfile=x.just", "ci"}, "--justfile=x.just", "ci", true},
		{[]string{"--set", "k", "v", "ci"}, "--set k v", "ci", true},
		{[]string{"--yes", "ci"}, "", "", false},
		{[]string{}, "", "", true},
	}
	for _, tt := range tests {
		opts, pos, ok := justArgs(tt.args)
		if strings.Join(opts, " ") != tt.opts || strings.Join(pos, " ") != tt.pos || ok != tt.ok {
			t.Errorf("justArgs(%q) = %q %q %v, want %q %q %v", tt.args, opts, pos, ok, tt.opts, tt.pos, tt.ok)
		}
	}
}

// A just guard is probed with the real just: no justfile, or no such
// recipe, is a problem saying what to add; a justfile with the recipe
// passes; a guard that is not just is not probed.
func TestCheckJust(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the probe's pass cache
	t.Setenv("HOME", t.TempDir())
	root := t.TempDir()
	if got := checkJust(root, []string{"just", "ci"}); len(got) != 1 || !strings.Contains(got[0], "just finds no justfile in "+root) {
		t.Fatalf("no justfile: %q", got)
	}
	os.WriteFile(filepath.Join(root, "justfile"), []byte("lint:\n\ttrue\n"), 0o644)
	if got := checkJust(root, []string{"just", "ci"}); len(got) != 1 || !strings.Contains(got[0], "the justfile has no recipe ci: add it") {
		t.Fatalf("no recipe: %q", got)
	}
	os.WriteFile(filepath.Join(root, "justfile"), []byte("ci:\n\ttrue\n"), 0o644)
	if got := checkJust(root, []string{"just", "ci"}); got != nil {
		t.Fatalf("the recipe is there: %q", got)
	}
	if got := checkJust(root, []string{"make", "ci"}); got != nil {
		t.Fatalf("not a just guard: %q", got)
	}
	// A Justfile (just reads the name in any case) is part of the pass's
	// key: once its recipe is gone, the remembered pass no longer holds.
	root = t.TempDir()
	os.WriteFile(filepath.Join(root, "Justfile"), []byte("ci:\n\ttrue\n"), 0o644)
	if got := checkJust(root, []string{"just", "ci"}); got != nil {
		t.Fatalf("a Justfile with the recipe: %q", got)
	}
	os.WriteFile(filepath.Join(root, "Justfile"), []byte("lint:\n\ttrue\n"), 0o644)
	if got := checkJust(root, []string{"just", "ci"}); len(got) != 1 || !strings.Contains(got[0], "no recipe ci") {
		t.Fatalf("the Justfile lost its recipe: %q", got)
	}
}

// A program with a slash is found relative to the repository, any other
// on PATH; each failure says why.
func TestFindExecutable(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(root, "plain"), nil, 0o644)
	os.Mkdir(filepath.Join(root, "dir"), 0o755)
	t.Setenv("PATH", root)
	tests := map[string]string{
		"./run.sh": "", "run.sh": "", "./gone": "no such file", "./plain": "not executable",
		"./dir": "is a directory", "nowhere": "not found on PATH",
	}
	for prog, want := range tests {
		err := findExecutable(root, prog)
		if (err == nil) != (want == "") || (err != nil && err.Error() != want) {
			t.Errorf("findExecutable(%q) = %v, want %q", prog, err, want)
		}
	}
}

// A budget the backend cannot measure is a problem: tokens for a backend
// that reports none; cost for one that reports none unless the model has
// a price.
func TestCheckBudgets(t *testing.T) {
	ctx := func(a config.Agent) *Context { return &Context{Config: config.Config{Agent: a}} }
	if got := checkBudgets(ctx(config.Agent{Backend: "command", MaxTokens: 10})); len(got) != 1 || !strings.Contains(got[0], "the command backend reports no tokens") {
		t.Errorf("tokens on command: %q", got)
	}
	if got := checkBudgets(ctx(config.Agent{Backend: "claude", MaxTokens: 10, MaxCostUSD: 1})); got != nil {
		t.Errorf("claude measures both: %q", got)
	}
	priced := config.Agent{Backend: "opencode", MaxCostUSD: 1, Model: "m", Prices: map[string]config.Price{"m": {Input: 1}}}
	if got := checkBudgets(ctx(priced)); got != nil {
		t.Errorf("a priced model: %q", got)
	}
	priced.Model = "other"
	if got := checkBudgets(ctx(priced)); len(got) != 1 || !strings.Contains(got[0], `[agent] prices has none for "other"`) {
		t.Errorf("an unpriced model: %q", got)
	}
}
