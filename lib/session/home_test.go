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

// TestUserConfig: where the sealed configuration lies: XDG_CONFIG_HOME
// when it is an absolute path, else ~/.config; GOENV's file besides
// when it names one of its own (absolute, not "off", not the default
// place); nothing for a home of "/" or none.
func TestUserConfig(t *testing.T) {
	dirsOf := func(home, xdg, goenv string) []string {
		var dirs []string
		for _, d := range UserConfig(home, xdg, goenv) {
			dirs = append(dirs, d.dir)
		}
		return dirs
	}
	base := []string{"/h", "/h/.config", "/h/.config/go", "/h/.cargo", "/h/.m2", "/h/.gradle"}
	for _, c := range []struct {
		xdg, goenv string
		want       []string
	}{
		{"", "", base},
		{"relative/xdg", "", base},
		{"/x", "", []string{"/h", "/x", "/x/go", "/h/.cargo", "/h/.m2", "/h/.gradle"}},
		{"", "/elsewhere/go.env", append(slices.Clone(base), "/elsewhere")},
		{"", "off", base},
		{"", "relative/go.env", base},
		{"", "/h/.config/go/env", base},
	} {
		if got := dirsOf("/h", c.xdg, c.goenv); !slices.Equal(got, c.want) {
			t.Errorf("XDG_CONFIG_HOME=%q GOENV=%q: %q, want %q", c.xdg, c.goenv, got, c.want)
		}
	}
	if d := UserConfig("/h", "", "/elsewhere/go.env"); d[len(d)-1].names[0] != "go.env" {
		t.Errorf("GOENV's file: %+v", d[len(d)-1])
	}
	for _, home := range []string{"", "/"} {
		if got := UserConfig(home, "", ""); got != nil {
			t.Errorf("home %q: %+v", home, got)
		}
	}
}
