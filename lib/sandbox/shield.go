package sandbox

import (
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/layout"
)

// Shields reports whether a command confined under cfg in root (as given
// to Open, with the same writable runner files) sees dir read-only, but
// for what lies in except (a directory under dir; "" for none): cfg
// confines (bwrap or docker); dir lies under root's runner files
// (.runner/, bound read-only after the root, New) with no symbolic link
// between them (a link would lead the session elsewhere); and no writable path (cfg.Writable, writable) lies in dir
// outside except, or between the runner's files and dir, where its mount
// would come after theirs (bwrap binds the configured writable paths
// before the root, so one that holds the root is covered by the root's
// own mounts; a container engine mounts a path before the paths under
// it); and no readable or writable path shows a service socket the
// sandbox hides (ServiceSockets), through which a session could start a
// process outside it. Not seen from here: a writable path that is another name of
// the repository through a mount of the host (the sandbox would show
// .git writable there too).
func Shields(cfg config.Sandbox, root, dir, except string, writable []string) bool {
	if !cfg.Confined() {
		return false
	}
	root, dir = filepath.Clean(root), filepath.Clean(dir)
	runner := filepath.Join(root, layout.Runner)
	rel, err := filepath.Rel(root, dir)
	realRoot, err1 := filepath.EvalSymlinks(root)
	realDir, err2 := filepath.EvalSymlinks(dir)
	if err != nil || err1 != nil || err2 != nil || !within(runner, dir) || realDir != filepath.Join(realRoot, rel) {
		return false
	}
	// The paths, as named and as resolved.
	dirs := [][2]string{{runner, dir}, {filepath.Join(realRoot, layout.Runner), realDir}}
	excepts := []string{"", ""}
	if except != "" {
		excepts = []string{filepath.Clean(except), realPath(except)}
	}
	home, _ := os.UserHomeDir()
	if showsServices(append(expandHome(cfg.Readable, home), expandHome(cfg.Writable, home)...)) {
		return false // a session could start a container, or a unit
	}
	for _, w := range append(expandHome(cfg.Writable, home), writable...) {
		for _, p := range []string{filepath.Clean(w), realPath(w)} {
			for i, d := range dirs {
				if within(d[0], p) && (within(d[1], p) || within(p, d[1])) && (excepts[i] == "" || !within(excepts[i], p)) {
					return false
				}
			}
		}
	}
	return true
}

// realPath is p with its symbolic links resolved, or p cleaned when that
// fails (a missing path is not mounted: bind-try skips it).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
