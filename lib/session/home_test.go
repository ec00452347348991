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
	h, err := sealHome(t.TempDir())
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

// TestAncestorSeal: what the guard's tools read from the directories
// above the repository (a conftest.py pytest loads when the repository
// has no configuration, a .cargo/config.toml cargo merges, a go.work) is
// sealed with the user's configuration: one a session adds or changes
// there is put back and named; anything else there stays.
func TestAncestorSeal(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GOENV", "")
	parent := t.TempDir()
	root := filepath.Join(parent, "work", "repo")
	writeFile(t, filepath.Join(root, "README"), "r\n")
	writeFile(t, filepath.Join(parent, "go.work"), "go 1.22\n")
	h, err := sealHome(root)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(parent, "work", "conftest.py"), "import evil\n")
	writeFile(t, filepath.Join(parent, ".cargo", "config.toml"), "[target.x86_64-unknown-linux-gnu]\nrunner = \"/tmp/fake\"\n")
	writeFile(t, filepath.Join(parent, "go.work"), "go 1.22\nreplace a => ./b\n")
	writeFile(t, filepath.Join(parent, "work", "notes.txt"), "mine\n")
	reasons, err := h.Restore("the agent")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(reasons)
	want := []string{
		"the agent changed the user's configuration: " + filepath.Join(parent, ".cargo", "config.toml") + " added; the runner put it back",
		"the agent changed the user's configuration: " + filepath.Join(parent, "go.work") + " changed; the runner put it back",
		"the agent changed the user's configuration: " + filepath.Join(parent, "work", "conftest.py") + " added; the runner put it back",
	}
	if !slices.Equal(reasons, want) {
		t.Errorf("reasons = %q, want %q", reasons, want)
	}
	if _, err := os.Stat(filepath.Join(parent, "work", "conftest.py")); !os.IsNotExist(err) {
		t.Errorf("conftest.py stays: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(parent, "go.work")); string(data) != "go 1.22\n" {
		t.Errorf("go.work = %q", data)
	}
	if _, err := os.Stat(filepath.Join(parent, "work", "notes.txt")); err != nil {
		t.Errorf("notes.txt: %v", err)
	}
}

// TestAncestorConfig: every directory above the repository's top, up to
// /, with the upward names and .cargo's config files.
func TestAncestorConfig(t *testing.T) {
	var got []string
	for _, d := range AncestorConfig("/a/b/repo") {
		got = append(got, d.dir)
		if filepath.Base(d.dir) == ".cargo" && !slices.Equal(d.names, []string{"config", "config.toml"}) ||
			filepath.Base(d.dir) != ".cargo" && !slices.Contains(d.names, "go.work") {
			t.Errorf("%s: names %q", d.dir, d.names)
		}
	}
	want := []string{"/a/b", "/a/b/.cargo", "/a", "/a/.cargo", "/", "/.cargo"}
	if !slices.Equal(got, want) {
		t.Errorf("dirs = %q, want %q", got, want)
	}
}

// TestAncestorSealUnderHome: with the repository under the home directory,
// the home is an ancestor too: its upward names are sealed beside the
// user's configuration, and ~/.cargo's config, which both would seal, is
// sealed once (one reason, not two).
func TestAncestorSealUnderHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GOENV", "")
	root := filepath.Join(home, "projects", "repo")
	writeFile(t, filepath.Join(root, "README"), "r\n")
	writeFile(t, filepath.Join(home, ".cargo", "config.toml"), "[build]\n")
	h, err := sealHome(root)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, "conftest.py"), "import evil\n")
	writeFile(t, filepath.Join(home, ".cargo", "config.toml"), "[target.x]\nrunner = \"/fake\"\n")
	reasons, err := h.Restore("the agent")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(reasons)
	want := []string{
		"the agent changed the user's configuration: ~/.cargo/config.toml changed; the runner put it back",
		"the agent changed the user's configuration: ~/conftest.py added; the runner put it back",
	}
	if !slices.Equal(reasons, want) {
		t.Errorf("reasons = %q, want %q", reasons, want)
	}
}
