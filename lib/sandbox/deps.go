package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
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
func DependencyDirs(root string, ignored []string) []string {
	var out []string
	for _, p := range ignored {
		dir, ok := strings.CutSuffix(p, "/")
		if !ok || dir == "" || runnerOwn(dir) {
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

// runnerOwn reports a path under .runner or .git.
func runnerOwn(p string) bool {
	top, _, _ := strings.Cut(p, "/")
	return top == ".runner" || top == ".git"
}

// NewDependencyDirs are the dependency directories of now (DependencyDirs,
// under root) that are not in before, nor under one of before, and that
// were made at since or later by their birth time (statx): those a
// session made. One that existed before it (a virtual environment the
// session's new ignore rule made ignored) is not among them; one whose
// birth time its filesystem does not keep is in unknown instead.
func NewDependencyDirs(root string, before, now []string, since time.Time) (made, unknown []string) {
	for _, d := range now {
		if slices.ContainsFunc(before, func(b string) bool { return d == b || strings.HasPrefix(d, b+"/") }) {
			continue
		}
		born, ok := birth(filepath.Join(root, filepath.FromSlash(d)))
		switch {
		case !ok:
			unknown = append(unknown, d)
		case !born.Before(since):
			made = append(made, d)
		}
	}
	return made, unknown
}

// birth is p's birth time, when its filesystem keeps one (statx's
// STATX_BTIME); p itself, not what a link names.
func birth(p string) (time.Time, bool) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return time.Time{}, false
	}
	return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)), true
}
