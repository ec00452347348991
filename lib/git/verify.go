package git

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// Verified reads (DESIGN.md decision 21): git does not hash again what it
// reads from its object store, so a session that rewrote a loose object
// (same name, other bytes) would have the runner read its bytes as the
// base's. ShowFiles therefore asks cat-file for every object on the way
// from the commit to the file (the commit, the root tree, each directory,
// the blob) and checks each against its id, and each id against the entry
// that names it: the file it returns is the one the commit id names, or an
// error. The commit is anchored at the id the caller gave (the step's
// base), or at the id git resolved a name to.

// ErrTampered is the error of an object whose bytes do not match its id.
type ErrTampered struct{ ID, Type string }

func (e *ErrTampered) Error() string {
	return fmt.Sprintf("git object %s (a %s) does not hash to its id: git's object store was changed behind git's back", e.ID, e.Type)
}

// ObjectID is git's id of an object of type typ holding body, in the
// hash of an id of hexLen digits (40: SHA-1, 64: SHA-256).
func ObjectID(typ string, body []byte, hexLen int) string {
	h := sha1.New()
	if hexLen == 64 {
		h = sha256.New()
	}
	return hex.EncodeToString(gitfile.HashObject(h, typ, body))
}

// chainRequests is what cat-file --batch is asked for rev:p, in order:
// the commit, the root tree, each directory on the way, the file.
func chainRequests(rev, p string) []string {
	req := []string{rev + "^{commit}", rev + "^{tree}"}
	dirs := strings.Split(p, "/")
	for i := 1; i < len(dirs); i++ {
		req = append(req, rev+":"+strings.Join(dirs[:i], "/"))
	}
	return append(req, rev+":"+p)
}

// batchHeader reads one cat-file --batch answer with its id
// (gitfile.ReadBatch): ok false for a missing one (rest: what follows),
// and rest nil for output that is not cat-file's.
func batchHeader(out []byte) (id, typ string, body, rest []byte, ok bool) {
	rec, rest, err := gitfile.ReadBatch(out)
	if err != nil {
		return "", "", nil, nil, false
	}
	return rec.ID, rec.Type, rec.Body, rest, !rec.Missing
}

// verifyChain reads the answers to chainRequests(rev, p) from out and
// checks them (see Verified reads). It returns the file's bytes, whether
// it exists (a regular file or link at p), the rest of out, and an error
// for a revision that is no commit, a path that is no file, or an object
// that does not match its id.
func verifyChain(rev, p string, out []byte) (data []byte, ok bool, rest []byte, err error) {
	n := len(chainRequests(rev, p))
	type answer struct {
		id, typ string
		body    []byte
		ok      bool
	}
	answers := make([]answer, n)
	for i := range answers {
		a := &answers[i]
		a.id, a.typ, a.body, out, a.ok = batchHeader(out)
		if out == nil {
			return nil, false, nil, fmt.Errorf("git cat-file --batch: output ends early")
		}
	}
	commit := answers[0]
	if !commit.ok || commit.typ != "commit" || gitfile.IsObjectID(rev) && commit.id != rev {
		return nil, false, out, fmt.Errorf("git rev-parse: unknown revision %s", rev)
	}
	want := commit.id
	wantType := "commit"
	var entries gitfile.Tree
	for i, a := range answers {
		if i > 0 && !a.ok {
			return nil, false, out, nil // missing on the way: no such file
		}
		if i >= 2 {
			name := path.Base(strings.SplitN(chainRequests(rev, p)[i], ":", 2)[1])
			e, found := entries[name]
			if !found {
				return nil, false, out, &ErrTampered{ID: answers[i-1].id, Type: "tree"}
			}
			want = hex.EncodeToString(e.ID)
			wantType = "tree"
			if i == n-1 {
				wantType = "blob"
			}
			if e.Mode == "160000" || (i < n-1 && e.Mode != "40000") {
				return nil, false, out, nil
			}
		}
		if a.id != want || a.typ != wantType && !(i == n-1 && a.typ == "tree") {
			return nil, false, out, &ErrTampered{ID: want, Type: wantType}
		}
		if ObjectID(a.typ, a.body, len(a.id)) != a.id {
			return nil, false, out, &ErrTampered{ID: a.id, Type: a.typ}
		}
		switch {
		case i == 0:
			tree, found := bytes.CutPrefix(a.body, []byte("tree "))
			if !found || len(tree) < len(a.id) {
				return nil, false, out, &ErrTampered{ID: a.id, Type: "commit"}
			}
			want, wantType = string(tree[:len(a.id)]), "tree"
		case i < n-1:
			if entries, err = gitfile.ParseTree(a.body, len(a.id)/2); err != nil {
				return nil, false, out, &ErrTampered{ID: a.id, Type: "tree"}
			}
		}
	}
	last := answers[n-1]
	if last.typ != "blob" {
		return nil, false, out, fmt.Errorf("git cat-file: %s:%s is a %s, not a file", rev, p, last.typ)
	}
	return last.body, true, out, nil
}
