package git

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// WriteBlobs copies the files (absolute paths, or relative to the root;
// no line breaks) into the object database as blobs, byte for byte (no
// filters), and returns their ids in the same order: one `git hash-object
// -w --stdin-paths` for all, or, where git would write them as it is here
// (looseWritable), no git process: each written as a loose object by
// gitfile.WriteLooseFile. The blobs are not referenced: git's gc keeps
// them gc.pruneExpire (two weeks), and writing one again renews it.
func (r *Repo) WriteBlobs(paths []string) ([]string, error) {
	var in strings.Builder
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			return nil, fmt.Errorf("git hash-object: a path with a line break: %q", p)
		}
		in.WriteString(p + "\n")
	}
	if objects, newHash, ok := r.looseWritable(); ok {
		ids := make([]string, len(paths))
		for i, p := range paths {
			if !filepath.IsAbs(p) {
				p = filepath.Join(r.root, p)
			}
			id, err := gitfile.WriteLooseFile(objects, newHash, p)
			if err != nil {
				return nil, fmt.Errorf("store %s as a blob: %w", p, err)
			}
			ids[i] = id
		}
		return ids, nil
	}
	out, err := run(r.root, []byte(in.String()), "hash-object", "-w", "--no-filters", "--stdin-paths")
	if err != nil {
		return nil, err
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(paths) {
		return nil, fmt.Errorf("git hash-object: %d ids for %d files", len(ids), len(paths))
	}
	return ids, nil
}

// looseWritable is the objects directory and the hash to write loose
// objects with here (gitfile.WriteLooseFile), where git would write them
// the same way: a plain git directory with a loose HEAD to take the hash
// from, in a step's hermetic git (the system and global settings are the
// snapshot in the environment, which must not set core.sharedRepository,
// an fsync setting or an extension), and a local config that names none
// of them, nor an include. ok is false otherwise: git writes.
func (r *Repo) looseWritable() (objects string, newHash func() hash.Hash, ok bool) {
	if os.Getenv(HermeticVar) != "1" {
		return "", nil, false
	}
	dir, plain := r.plainGitDir()
	if !plain {
		return "", nil, false
	}
	_, head, ok := r.looseHead()
	switch {
	case !ok:
		return "", nil, false
	case len(head) == sha1.Size*2:
		newHash = sha1.New
	case len(head) == sha256.Size*2:
		newHash = sha256.New
	default:
		return "", nil, false
	}
	for _, kv := range os.Environ() {
		if name, key, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "GIT_CONFIG_KEY_") && looseUnsafe(key) {
			return "", nil, false
		}
	}
	local, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) || looseUnsafe(string(local)) {
		return "", nil, false
	}
	return filepath.Join(dir, "objects"), newHash, true
}

// looseUnsafe reports whether config text (a key, or a config file) may
// name a setting that changes how git writes a loose object (the
// permissions, a sync, another object format beside the hash) or pulls in
// another file: matched loosely, as words anywhere, so that a doubt leaves
// the write to git.
func looseUnsafe(config string) bool {
	c := strings.ToLower(config)
	for _, w := range []string{"sharedrepository", "fsync", "extensions", "include"} {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

// WriteBlob stores data in the object database as a blob, byte for byte
// (no filters), and returns its id: one `git hash-object -w --stdin`,
// which writes nothing when the object is there already (a file's bytes
// as committed). A blob no commit references is kept gc.pruneExpire (two
// weeks); writing it again renews it.
//
// When the blob is there already as a loose object of a plain git
// directory (the step's tree as the last `git add` stored it), no git
// runs: the id is computed here, with the hash HEAD's id was made with
// (read from git's files), and the
// object file's time renewed, as hash-object does to an object it finds
// (git's freshen, which reads no more of the file than its name either).
func (r *Repo) WriteBlob(data []byte) (string, error) {
	if id, ok := r.looseBlob(data); ok {
		return id, nil
	}
	out, err := run(r.root, data, "hash-object", "-w", "--no-filters", "--stdin")
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(out))
	if n := len(id); n != sha1.Size*2 && n != sha256.Size*2 {
		return "", fmt.Errorf("git hash-object: %q is not an object id", id)
	}
	return id, nil
}

// looseBlob is WriteBlob's id of data when the blob is a loose object of
// a plain git directory already, its time renewed; ok is false when it is
// not, or when that cannot be told without git (no loose HEAD to take the
// hash from, GIT_OBJECT_DIRECTORY set, a worktree's git file).
func (r *Repo) looseBlob(data []byte) (id string, ok bool) {
	dir, plain := r.plainGitDir()
	if !plain {
		return "", false
	}
	_, head, ok := r.looseHead()
	if !ok || len(head) != sha1.Size*2 && len(head) != sha256.Size*2 {
		return "", false
	}
	id = ObjectID("blob", data, len(head))
	now := time.Now()
	if os.Chtimes(filepath.Join(dir, "objects", id[:2], id[2:]), now, now) != nil {
		return "", false
	}
	return id, true
}

// Blob returns the bytes of blob id, checked against the id (an object
// file rewritten in place would otherwise be read as it is); ok is false
// when the object is missing, is not a blob or does not match its id.
func (r *Repo) Blob(id string) (data []byte, ok bool, err error) {
	var h hash.Hash
	switch len(id) {
	case sha1.Size * 2:
		h = sha1.New()
	case sha256.Size * 2:
		h = sha256.New()
	default:
		return nil, false, fmt.Errorf("git cat-file: %q is not an object id", id)
	}
	out, err := run(r.root, []byte(id+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, false, err
	}
	typ, body, _, found := batchObject(out)
	if !found || typ != "blob" {
		return nil, false, nil
	}
	if hex.EncodeToString(gitfile.HashObject(h, "blob", body)) != strings.ToLower(id) {
		return nil, false, nil
	}
	return body, true, nil
}
