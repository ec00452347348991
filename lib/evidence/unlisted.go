package evidence

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// RemoveUnlisted removes, under root, what a session made that git lists
// nowhere and no commit can hold, before any git process reads the work
// tree after the session: a FIFO, a socket or a device file (a FIFO named
// .gitignore or .gitattributes would hang every git process that reads
// it, the operator's too; one of those names is removed whatever its
// age), and a directory with nothing in it but such directories (Python
// imports an empty directory as a package, so code could tell the
// session's work tree from a clone of the commit). What was born or
// changed before since stays. .runner at the top, and a .git directory
// (a repository's, the work tree's or one inside it) and the dependency
// directories (node_modules, virtual environments, __pypackages__) at any
// depth, are not walked; links are not followed.
// It returns what it removed (slash paths, a directory's with a trailing
// "/"). What cannot be read or removed is left as it is (a directory that
// cannot be read counts as holding something): a session cannot make this
// stop the step.
func RemoveUnlisted(root string, since time.Time) []string {
	var removed []string
	var walk func(dir, rel string) bool
	walk = func(dir, rel string) bool {
		ents, ok := readDir(dir)
		if !ok {
			return false
		}
		empty := true
		for _, e := range ents {
			// A file or a link, most of a work tree: the directory holds
			// something, and neither path is made (the walk's cost grows
			// with the files, not only the directories).
			t := e.Type()
			if t&(fs.ModeDir|unlistable) == 0 {
				empty = false
				continue
			}
			name := e.Name()
			p, r := filepath.Join(dir, name), name
			if rel != "" {
				r = rel + "/" + name
			}
			if t.IsDir() {
				if name == ".git" || rel == "" && name == ".runner" || slices.Contains([]string{"node_modules", "__pypackages__", ".venv", "venv"}, name) {
					empty = false
					continue
				}
				if walk(p, r) && fsutil.MadeSince(p, since) && os.Remove(p) == nil {
					removed = append(removed, r+"/")
					continue
				}
				empty = false
				continue
			}
			if (strings.HasPrefix(name, ".git") || fsutil.MadeSince(p, since)) && os.Remove(p) == nil {
				removed = append(removed, r)
				continue
			}
			empty = false
		}
		return empty
	}
	walk(root, "")
	slices.Sort(removed)
	return removed
}

// unlistable are the file types git lists nowhere and no commit can hold
// (RemoveUnlisted).
const unlistable = fs.ModeNamedPipe | fs.ModeSocket | fs.ModeDevice | fs.ModeCharDevice

// readDir is dir's entries in the order the filesystem gives them (the
// walk sorts what it removes, not what it reads); ok is false when dir
// cannot be read whole.
func readDir(dir string) ([]fs.DirEntry, bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	return ents, err == nil
}
