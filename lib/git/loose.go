package git

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// Reads without git: where every object a read needs is a loose object of
// the repository (as the step's last commit, its trees and the files it
// changed are, until git packs them), ShowFiles and TreeWith read them
// here (gitfile.ReadLoose, each checked against its id) instead of
// starting git cat-file; anything else (a packed object, one that does
// not hash to its id) and they ask git, whose answer stands.

// looseReadable is the objects directory and the hash to read rev's
// objects with, without git: rev a full commit id, a plain git directory
// (looseWritable's), in the step's hermetic git, which reads no replace
// refs (GIT_NO_REPLACE_OBJECTS), as reads here do not. ok is false
// otherwise.
func (r *Repo) looseReadable(rev string) (objects string, newHash func() hash.Hash, ok bool) {
	if os.Getenv(HermeticVar) != "1" || !gitfile.IsObjectID(rev) {
		return "", nil, false
	}
	dir, plain := r.plainGitDir()
	if !plain {
		return "", nil, false
	}
	newHash = sha1.New
	if len(rev) == sha256.Size*2 {
		newHash = sha256.New
	}
	return filepath.Join(dir, "objects"), newHash, true
}

// looseRootTree is the id of commit's tree, from its loose object; ok is
// false when it is not one (git is asked).
func looseRootTree(objects string, newHash func() hash.Hash, commit string) (string, bool) {
	typ, body, ok := gitfile.ReadLoose(objects, commit, newHash)
	if !ok || typ != "commit" {
		return "", false
	}
	tree, found := bytes.CutPrefix(body, []byte("tree "))
	if !found || len(tree) < len(commit) || !gitfile.IsObjectID(string(tree[:len(commit)])) {
		return "", false
	}
	return string(tree[:len(commit)]), true
}

// looseTree is the entries of the loose tree object id; ok is false when
// it is not one, or not a tree as git writes it (gitfile.CanonicalTree:
// git's own lookup answers for those).
func looseTree(objects string, newHash func() hash.Hash, id string) (gitfile.Tree, bool) {
	typ, body, ok := gitfile.ReadLoose(objects, id, newHash)
	if !ok || typ != "tree" {
		return nil, false
	}
	t, err := gitfile.ParseTree(body, newHash().Size())
	return t, err == nil && gitfile.CanonicalTree(body, t)
}

// looseFile is ShowFiles' answer for p at commit rev (verifyChain's) from
// loose objects alone: the file's bytes, whether it exists (a regular file
// or a link there), an error for a directory. done is false when that
// takes an object that is not loose (or not what its id says): git is
// asked.
func looseFile(objects string, newHash func() hash.Hash, rev, p string) (data []byte, ok bool, err error, done bool) {
	if !plainPath(p) {
		return nil, false, nil, false
	}
	id, found := looseRootTree(objects, newHash, rev)
	parts := strings.Split(p, "/")
	for i, name := range parts {
		if !found {
			return nil, false, nil, false
		}
		var entries gitfile.Tree
		if entries, found = looseTree(objects, newHash, id); !found {
			return nil, false, nil, false
		}
		e, present := entries[name]
		last := i == len(parts)-1
		switch {
		case !present, e.Mode == "160000", !last && e.Mode != "40000":
			return nil, false, nil, true // no such file
		case last && e.Mode == "40000":
			if typ, ok := gitfile.LooseType(objects, hex.EncodeToString(e.ID)); !ok || typ != "tree" {
				return nil, false, nil, false // git says what a directory's entry naming no tree is
			}
			return nil, false, fmt.Errorf("git cat-file: %s:%s is a tree, not a file", rev, p), true
		}
		id = hex.EncodeToString(e.ID)
	}
	typ, body, found := gitfile.ReadLoose(objects, id, newHash)
	if !found || typ != "blob" {
		return nil, false, nil, false
	}
	return body, true, nil, true
}

// looseShowFiles is ShowFiles' answer from loose objects alone, where
// every file is read at a commit named by its full id and every object it
// takes is loose (looseFile); ok is false otherwise.
func (r *Repo) looseShowFiles(files []File) ([]File, bool) {
	res := make([]File, len(files))
	for i, f := range files {
		objects, newHash, ok := r.looseReadable(f.Rev)
		if !ok {
			return nil, false
		}
		res[i] = f
		var done bool
		if res[i].Data, res[i].OK, res[i].Err, done = looseFile(objects, newHash, f.Rev, f.Path); !done {
			return nil, false
		}
	}
	return res, true
}

// looseTrees is readTrees' answer from loose objects alone: the entries
// of each directory of names at commit, empty for one the commit does not
// have as a directory (new, or a file, or a submodule there); ok is false
// when an object it takes is not loose.
func (r *Repo) looseTrees(commit string, names []string) (map[string]gitfile.Tree, bool) {
	objects, newHash, ok := r.looseReadable(commit)
	if !ok {
		return nil, false
	}
	root, ok := looseRootTree(objects, newHash, commit)
	if !ok {
		return nil, false
	}
	trees := make(map[string]gitfile.Tree, len(names))
	for _, d := range names {
		id, entries := root, gitfile.Tree(nil)
		var parts []string
		if d != "" {
			parts = strings.Split(d, "/")
		}
		for {
			if entries, ok = looseTree(objects, newHash, id); !ok {
				return nil, false
			}
			if len(parts) == 0 {
				break
			}
			e, present := entries[parts[0]]
			if !present || e.Mode != "40000" {
				entries = gitfile.Tree{} // not a directory of the commit's
				break
			}
			id, parts = hex.EncodeToString(e.ID), parts[1:]
		}
		trees[d] = entries
	}
	return trees, true
}
