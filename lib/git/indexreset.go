package git

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// ResetIndex makes the index one that only git wrote from what it can
// check, after a session wrote it: git's index can hide a change from
// every git status, git add and commit (a path marked assume-unchanged,
// or skip-worktree, its file changed or deleted, or a cache of tree ids that
// names a directory's tree in the commit while its entries differ), so
// that the guard runs on a change the runner's commit leaves out. The
// marks are cleared (`git update-index --no-assume-unchanged`,
// `--no-skip-worktree`, but on an absent file in a sparse checkout
// (core.sparseCheckout), as git marks it), then `git read-tree --reset base` resets
// the entries to base's, keeping the stat data of those that equal it,
// its cache of tree ids taken from base's trees, and no untracked cache
// (core.untrackedCache=false). What the session changed stays in the
// work tree, for the runner's own staging; base is a full commit id.
// Errors are git's.
func (r *Repo) ResetIndex(base string) error {
	out, err := r.Run("ls-files", "-v", "-z")
	if err != nil {
		return err
	}
	var assumed, skipped bytes.Buffer
	sparse := -1 // core.sparseCheckout, read once an absent file is marked
	for _, rec := range strings.Split(string(out), "\x00") {
		if len(rec) < 3 || rec[1] != ' ' {
			continue
		}
		tag, p := rec[0], rec[2:]
		if 'a' <= tag && tag <= 'z' { // -v: assume-unchanged in lower case
			assumed.WriteString(p + "\x00")
		}
		if tag != 'S' && tag != 's' {
			continue
		}
		if _, err := os.Lstat(filepath.Join(r.root, filepath.FromSlash(p))); err != nil {
			if sparse < 0 {
				sparse = 0
				if v, _ := r.Run("config", "--bool", "core.sparseCheckout"); strings.TrimSpace(string(v)) == "true" {
					sparse = 1
				}
			}
			if sparse == 1 {
				continue // outside a sparse checkout's cone, as git keeps it
			}
		}
		skipped.WriteString(p + "\x00")
	}
	if assumed.Len() > 0 {
		if _, err := runEnv(r.root, nil, assumed.Bytes(), "update-index", "--no-assume-unchanged", "-z", "--stdin"); err != nil {
			return err
		}
	}
	if skipped.Len() > 0 {
		if _, err := runEnv(r.root, nil, skipped.Bytes(), "update-index", "--no-skip-worktree", "-z", "--stdin"); err != nil {
			return err
		}
	}
	_, err = r.Run("-c", "core.untrackedCache=false", "read-tree", "--reset", base)
	return err
}
