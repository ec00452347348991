package session

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestHomeSeal: the user's configuration files a session changes, adds or
// removes are put back and named; what else the tools write under the
// home directory (go's telemetry beside go/env, a cache) stays.
func TestHomeSeal(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GOENV", "")
	writeFile(t, filepath.Join(home, ".gitconfig"), "[user]\n\tname = me\n")
	h, err := sealHome()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = /x\n")
	writeFile(t, filepath.Join(home, ".config/go/env"), "GOFLAGS=-skip=TestMul\n")
	writeFile(t, filepath.Join(home, ".config/go/telemetry/local/x"), "count\n")
	writeFile(t, filepath.Join(home, ".cache/thing"), "cache\n")
	reasons, err := h.Restore("the agent")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"the agent changed the user's configuration: ~/.gitconfig changed; the runner put it back",
		"the agent changed the user's configuration: ~/.config/go/env added; the runner put it back",
	}
	if !slices.Equal(reasons, want) {
		t.Errorf("reasons = %q", reasons)
	}
	if data, _ := os.ReadFile(filepath.Join(home, ".gitconfig")); string(data) != "[user]\n\tname = me\n" {
		t.Errorf(".gitconfig = %q", data)
	}
	for _, p := range []string{".config/go/telemetry/local/x", ".cache/thing"} {
		if _, err := os.Stat(filepath.Join(home, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".config/go/env")); !os.IsNotExist(err) {
		t.Errorf("go/env stays: %v", err)
	}
}
