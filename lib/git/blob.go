package git

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// WriteBlobs copies the files (absolute paths, or relative to the root;
// no line breaks) into the object database as blobs, byte for byte (no
// filters), and returns their ids in the same order: one `git hash-object
// -w --stdin-paths` for all. The blobs are not referenced: git's gc keeps
// them gc.pruneExpire (two weeks), and writing one again renews it.
func (r *Repo) WriteBlobs(paths []string) ([]string, error) {
	var in strings.Builder
	for _, p := range paths {
		if strings.ContainsAny(p, "\n\r") {
			return nil, fmt.Errorf("git hash-object: a path with a line break: %q", p)
		}
		in.WriteString(p + "\n")
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

// WriteBlob stores data in the object database as a blob, byte for byte
// (no filters), and returns its id: one `git hash-object -w --stdin`,
// which writes nothing when the object is there already (a file's bytes
// as committed). A blob no commit references is kept gc.pruneExpire (two
// weeks); writing it again renews it.
func (r *Repo) WriteBlob(data []byte) (string, error) {
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
