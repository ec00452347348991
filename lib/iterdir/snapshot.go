package iterdir

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
)

// The tree an iteration began with is no file of its log: begin.json's
// tree_blob names it in git's object database, where the step's base
// commit holds it already (two copies of the tree in every iteration
// directory made the log grow with the tree, not with the change:
// bench/runner-growth.md). What the iteration changed in it is in
// diff.patch, and the tree after it in the commit meta.json names (or its
// staged_tree).

// SnapshotTree returns the tree the iteration in dir began with, for a
// repository whose top-level directory is root: the blob begin.json's
// tree_blob names, checked against its id; in an older directory, whose
// begin.json names none, its tree.before.json. The blob is read from the
// work tree's tree.json while that still hashes to the id (right after
// iter-log begin: no git process), else from git's object database. name
// says where it was read, for messages. data is valid until release is
// called (never nil), and must not be written or kept (fsutil.MapFile).
func SnapshotTree(root, dir string, b Begin) (data []byte, release func(), name string, err error) {
	if b.TreeBlob == "" {
		data, release, err := fsutil.MapFile(filepath.Join(dir, TreeBefore), "", 0)
		if err != nil {
			return nil, release, TreeBefore, fmt.Errorf("read %s: %v", TreeBefore, fsutil.Cause(err))
		}
		return data, release, TreeBefore, nil
	}
	id := strings.ToLower(b.TreeBlob)
	name = fmt.Sprintf("the tree of %s (blob %.12s)", BeginFile, id)
	data, release, err = fsutil.MapFile(filepath.Join(root, layout.Tree), root, 0)
	if err == nil && git.ObjectID("blob", data, len(id)) == id {
		return data, release, name, nil
	}
	release()
	none := func() {}
	repo, err := git.Open(root)
	if err != nil {
		return nil, none, name, err
	}
	data, ok, err := repo.Blob(id)
	switch {
	case err != nil:
		return nil, none, name, fmt.Errorf("read %s: %v", name, err)
	case !ok:
		return nil, none, name, fmt.Errorf("read %s: git's object database has no blob %s that matches its id", name, id)
	}
	return data, none, name, nil
}
