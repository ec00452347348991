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

// homeSettings holds the user's configuration across a session.
type homeSettings struct {
	seals []*seal.Seal
	dirs  []string
	home  string
}

// sealHome seals the user's configuration (UserConfig of this process's
// home and environment).
func sealHome() (*homeSettings, error) {
	home, _ := os.UserHomeDir()
	h := &homeSettings{home: home}
	for _, d := range UserConfig(home, os.Getenv("XDG_CONFIG_HOME"), os.Getenv("GOENV")) {
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
