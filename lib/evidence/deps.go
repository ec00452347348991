package evidence

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// DependencyDirs are the directories of installed dependencies among a
// work tree's ignored paths (ignored: git's list, "dir/" for a whole
// directory, as git.Repo.Ignored gives it), repository-relative slash
// paths in the order given: node_modules and __pypackages__ at any depth,
// and a virtual environment (a directory named .venv or venv, or one
// holding pyvenv.cfg, at any depth). The runner's own (.runner, .git) are
// not among them, nor a link (a virtual environment kept elsewhere).
//
// A confined session sees them read-only: the test runner, its plugins
// and every package the guard loads are the operator's install, which no
// session can change (a .pth file added to .venv's site-packages runs in
// every later guard, and git shows no change); see docs/threat-model.md.
// One a session makes where none was is removed after it, with the rest of
// what it made that git ignores (SweepMade).
func DependencyDirs(root string, ignored []string) []string {
	var out []string
	for _, p := range ignored {
		dir, ok := strings.CutSuffix(p, "/")
		if !ok || dir == "" || ownTop(dir) {
			continue
		}
		switch path.Base(dir) {
		case "node_modules", "__pypackages__", ".venv", "venv":
			out = append(out, dir)
			continue
		}
		if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(dir), "pyvenv.cfg")); err == nil && st.Mode().IsRegular() {
			out = append(out, dir)
		}
	}
	return out
}
