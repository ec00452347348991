package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/treeloop/treeloop/lib/seal"
)

// The user's own configuration that the guard's tools read from the home
// directory: a session may change none of it, or the next guard would run
// otherwise than the user set it up (`go env -w GOFLAGS=-skip=…`, a
// core.hooksPath in ~/.gitconfig, a registry in ~/.npmrc). It is sealed
// like git's settings (detect and restore): taken before the session, put
// back after it, and a change is the session's fault. Under [sandbox] mode
// = "bwrap" a session sees an empty home instead, except the configured
// writable and readable paths.
//
// UserConfig lists them as directories each with the names kept under it
// (nil: everything under the directory).
type userDir struct {
	dir   string
	names []string // nil: the whole directory
}

// UserConfig is the user configuration sealed for home (the home
// directory), xdg ($XDG_CONFIG_HOME, "" for ~/.config) and goenv ($GOENV,
// "" for go's default), as directories and the entries kept in each.
func UserConfig(home, xdg, goenv string) []userDir {
	if home == "" || home == "/" {
		return nil
	}
	if xdg == "" || !filepath.IsAbs(xdg) {
		xdg = filepath.Join(home, ".config")
	}
	dirs := []userDir{
		// git, npm and yarn, pip, python's distutils
		{home, []string{".gitconfig", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pydistutils.cfg", ".pypirc", ".gemrc", ".pip"}},
		// git's XDG files (config, attributes, ignore), pip, npm, poetry, uv
		{xdg, []string{"git", "pip", "npm", "pypoetry", "uv"}},
		// go env -w (the go command keeps its telemetry beside it)
		{filepath.Join(xdg, "go"), []string{"env"}},
		{filepath.Join(home, ".cargo"), []string{"config", "config.toml"}},
		{filepath.Join(home, ".m2"), []string{"settings.xml"}},
		{filepath.Join(home, ".gradle"), []string{"gradle.properties", "init.gradle", "init.gradle.kts", "init.d"}},
	}
	if goenv != "" && goenv != "off" && filepath.IsAbs(goenv) && goenv != filepath.Join(xdg, "go", "env") {
		dirs = append(dirs, userDir{filepath.Dir(goenv), []string{filepath.Base(goenv)}})
	}
	return dirs
}

// upward are the names the guard's tools look for in every directory
// above the one they run in, up to the root, when the repository does not
// settle them itself: cargo merges every .cargo/config.toml above it (a
// [target] runner there runs the test binary through a program of the
// session's choosing), rustup takes the nearest rust-toolchain file, go
// the nearest go.work (its replace directives swap a test's dependency),
// pytest the nearest ini file or rootdir marker when the repository has
// none (its conftest.py then loads too), mocha the nearest .mocharc,
// Gradle the nearest settings file.
var upward = []string{
	"go.work", "go.work.sum", "rust-toolchain", "rust-toolchain.toml",
	"pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg", "setup.py", "conftest.py",
	".mocharc.js", ".mocharc.cjs", ".mocharc.mjs", ".mocharc.yaml", ".mocharc.yml", ".mocharc.jsonc", ".mocharc.json",
	"settings.gradle", "settings.gradle.kts",
}

// AncestorConfig is the configuration sealed in the directories above
// root, the repository's top (absolute, clean), up to /: in each, the
// upward names and .cargo's config files. Without a sandbox a session
// could write there as it could in the home directory; under bwrap they
// are read-only, or (/tmp, the home directory) a session's own.
func AncestorConfig(root string) []userDir {
	var dirs []userDir
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		dirs = append(dirs, userDir{d, upward}, userDir{filepath.Join(d, ".cargo"), []string{"config", "config.toml"}})
		if d == filepath.Dir(d) {
			return dirs
		}
	}
}

// homeSettings holds the user's configuration across a session.
type homeSettings struct {
	seals []*seal.Seal
	dirs  []string
	home  string
}

// sealHome seals the user's configuration (UserConfig of this process's
// home and environment) and the configuration above root, the
// repository's top (AncestorConfig), but what UserConfig seals already,
// and the upward names in each of also (the git directories above the
// witness's scratch checkout, .git/treeloop/witness: a go.work or a
// .cargo/config.toml there would fail its run on the code before the
// node's work, a witness for a test that never failed).
func sealHome(root string, also ...string) (*homeSettings, error) {
	home, _ := os.UserHomeDir()
	h := &homeSettings{home: home}
	dirs := UserConfig(home, os.Getenv("XDG_CONFIG_HOME"), os.Getenv("GOENV"))
	above := AncestorConfig(filepath.Clean(root))
	for _, d := range also {
		above = append(above, userDir{d, upward}, userDir{filepath.Join(d, ".cargo"), []string{"config", "config.toml"}})
	}
	for _, a := range above {
		if !slices.ContainsFunc(dirs, func(d userDir) bool { return d.dir == a.dir }) {
			dirs = append(dirs, a)
			continue
		}
		// A directory UserConfig seals some names of (the home
		// directory): the rest of the names too, in a seal of their own.
		var more []string
		for _, n := range a.names {
			if !slices.ContainsFunc(dirs, func(d userDir) bool { return d.dir == a.dir && slices.Contains(d.names, n) }) {
				more = append(more, n)
			}
		}
		if len(more) > 0 && filepath.Base(a.dir) != ".cargo" {
			dirs = append(dirs, userDir{a.dir, more})
		}
	}
	for _, d := range dirs {
		names := d.names
		s, err := seal.Take(d.dir, func(rel string) bool {
			return !slices.Contains(names, strings.SplitN(rel, "/", 2)[0])
		})
		if err != nil {
			return nil, err
		}
		h.seals, h.dirs = append(h.seals, s), append(h.dirs, d.dir)
	}
	return h, nil
}

// Restore puts the user's configuration back as sealed and returns one
// reason per path, naming who.
func (h *homeSettings) Restore(who string) ([]string, error) {
	var reasons []string
	for i, s := range h.seals {
		notes, err := s.Restore()
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			p := filepath.Join(h.dirs[i], n)
			if rel, err := filepath.Rel(h.home, p); err == nil && !strings.HasPrefix(rel, "..") {
				p = "~/" + filepath.ToSlash(rel)
			}
			reasons = append(reasons, fmt.Sprintf("%s changed the user's configuration: %s; the runner put it back", who, p))
		}
	}
	return reasons, nil
}

func (h *homeSettings) digest() string {
	var parts []string
	for _, s := range h.seals {
		parts = append(parts, s.Digest())
	}
	return sha256Hex([]byte(strings.Join(parts, ",")))
}
