package gitfile

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"path"
	"sort"
	"strconv"
	"strings"
)

// ErrMalformedTree is ParseTree's refusal of bytes that are not a tree
// object's.
var ErrMalformedTree = errors.New("a malformed tree object")

// TreeEntry is one entry of a tree object: its mode as the object spells
// it (100644, 100755, 120000, 160000, or 40000 for a directory: no
// leading zero) and its raw object id.
type TreeEntry struct {
	Mode string
	ID   []byte
}

// Tree is a tree object's entries by name.
type Tree map[string]TreeEntry

// ParseTree reads a tree object's content: entries "<mode> SP <name>
// NUL <raw id>" of idLen bytes each (20 for SHA-1, 32 for SHA-256), as
// `git cat-file tree` prints it. ErrMalformedTree when the bytes do not
// split into such entries exactly.
func ParseTree(body []byte, idLen int) (Tree, error) {
	t := Tree{}
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || nul+1+idLen > len(body) {
			return nil, ErrMalformedTree
		}
		t[string(body[sp+1:nul])] = TreeEntry{Mode: string(body[:sp]), ID: append([]byte(nil), body[nul+1:nul+1+idLen]...)}
		body = body[nul+1+idLen:]
	}
	return t, nil
}

// CanonicalTree reports whether body, parsed as t (ParseTree), is a tree
// as git writes it: each name once, in git's order (EncodeTree's), each
// mode one git writes (100644, 100755, 120000, 40000, 160000). On any
// other tree (a zero-padded 040000 of old tools, a name twice, entries out
// of order: what git fsck warns of) a lookup by name here need not find
// what git's does, nor a tree rebuilt from t keep what git's would.
func CanonicalTree(body []byte, t Tree) bool {
	for _, e := range t {
		switch e.Mode {
		case "100644", "100755", "120000", "40000", "160000":
		default:
			return false
		}
	}
	obj, _ := EncodeTree(t)
	return bytes.Equal(obj, body)
}

// EncodeTree returns t's object content in git's order (names compared
// byte by byte, a directory's as if it ended in "/"), and the same
// entries as `git mktree -z` input: "<mode> SP <type> SP <hex id> TAB
// <name> NUL" each, the mode six digits (040000 for a tree), the type
// blob, tree or commit (a submodule). The entries are taken as they are:
// names and modes are the caller's to check.
func EncodeTree(t Tree) (obj, mktree []byte) {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	key := func(n string) string {
		if t[n].Mode == "40000" {
			return n + "/"
		}
		return n
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	for _, n := range names {
		e := t[n]
		obj = append(obj, e.Mode...)
		obj = append(obj, ' ')
		obj = append(obj, n...)
		obj = append(obj, 0)
		obj = append(obj, e.ID...)
		typ, mode := "blob", e.Mode
		switch e.Mode {
		case "40000":
			typ, mode = "tree", "040000"
		case "160000":
			typ = "commit"
		}
		mktree = fmt.Appendf(mktree, "%s %s %s\t%s\x00", mode, typ, hex.EncodeToString(e.ID), n)
	}
	return obj, mktree
}

// HashObject is the raw id git gives an object of type typ ("blob",
// "tree", "commit") holding body: the hash of "<type> SP <size> NUL"
// and the body, by h (sha1.New or sha256.New's, reset by the caller or
// fresh).
func HashObject(h hash.Hash, typ string, body []byte) []byte {
	h.Write([]byte(typ + " " + strconv.Itoa(len(body)) + "\x00"))
	h.Write(body)
	return h.Sum(nil)
}

// IsObjectID reports whether s is a full object id as git writes it (40
// or, in a SHA-256 repository, 64 lowercase hex digits).
func IsObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ErrEmptyTree is EncodeTrees' refusal of an empty root tree.
var ErrEmptyTree = errors.New("an empty root tree")

// EncodeTrees encodes the trees of dirs (directory paths with forward
// slashes, "" the root, every directory's parent among them; each a key
// of trees) as `git mktree -z --batch` input, deepest first: a
// directory's id goes into its parent before the parent is written, and
// an emptied directory leaves its parent. It returns the input, the tree
// objects' contents in the same order and the ids the trees must get, the
// root's last, hashed by newHash (sha1.New or sha256.New). It sorts dirs
// and changes trees in place. ErrEmptyTree when the root would be empty
// (git write-tree's case).
func EncodeTrees(trees map[string]Tree, dirs []string, newHash func() hash.Hash) (batch []byte, objs [][]byte, want []string, err error) {
	depth := func(d string) int {
		if d == "" {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	sort.Slice(dirs, func(i, j int) bool {
		if di, dj := depth(dirs[i]), depth(dirs[j]); di != dj {
			return di > dj
		}
		return dirs[i] < dirs[j]
	})
	var buf bytes.Buffer
	for _, d := range dirs {
		t := trees[d]
		if d != "" {
			parent, name := trees[parentDir(d)], path.Base(d)
			if len(t) == 0 {
				if e, ok := parent[name]; ok && e.Mode == "40000" {
					delete(parent, name)
				}
				continue
			}
		} else if len(t) == 0 {
			return nil, nil, nil, ErrEmptyTree
		}
		obj, lines := EncodeTree(t)
		id := HashObject(newHash(), "tree", obj)
		if d != "" {
			trees[parentDir(d)][path.Base(d)] = TreeEntry{Mode: "40000", ID: id}
		}
		buf.Write(lines)
		buf.WriteByte(0)
		objs = append(objs, obj)
		want = append(want, hex.EncodeToString(id))
	}
	return buf.Bytes(), objs, want, nil
}

// parentDir is p's directory, "" for the root.
func parentDir(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}
