package git

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/treeloop/treeloop/lib/fsutil"
)

// Staged is the tree of the index as a step staged it: iter-log
// end writes it (`git write-tree`, then its diff from HEAD to that tree)
// and records it in meta.json, and loop-commit --as-staged commits it
// without a second write-tree. Index is the index file's stamp right after (see
// IndexStamp): the tree is taken only while the index is still that very
// file, so an index changed since (or a stamp from another repository,
// or none) costs one write-tree, never a commit of the wrong tree. The
// zero Staged records nothing.
type Staged struct {
	Tree  string // the tree id write-tree printed
	Index string // IndexStamp of the index the tree was written from
}

// WriteTree writes the index's tree with `git write-tree` (which also
// stores the index's cache tree back, under index.lock), run as by
// (CommitEnv, as for the commit it is written for), and returns its id.
func (r *Repo) WriteTree(by string) (string, error) {
	out, err := runEnv(r.root, []string{CommitEnv + "=" + by}, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// IndexStamp says which file the index is now, without reading it: its
// inode, size and modification time (nanoseconds) and the checksum git
// ends it with (the last 32 bytes: a SHA-256 index's whole checksum, a
// SHA-1 one's and 12 bytes before it). Git writes the index to
// index.lock and renames it, so every write gives a new inode and a new
// checksum. ok is false where the index is not the plain .git/index
// (plainGitDir: a linked worktree, GIT_DIR, GIT_INDEX_FILE) or cannot be
// read; no stamp matches then.
func (r *Repo) IndexStamp() (stamp string, ok bool) {
	dir, plain := r.plainGitDir()
	if !plain {
		return "", false
	}
	f, err := os.Open(filepath.Join(dir, "index"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < 32 {
		return "", false
	}
	ino, _ := fsutil.Inode(st)
	var sum [32]byte
	if _, err := f.ReadAt(sum[:], st.Size()-32); err != nil && err != io.EOF {
		return "", false
	}
	return fmt.Sprintf("%d:%d:%d:%x", ino, st.Size(), st.ModTime().UnixNano(), sum), true
}

// stagedTree is s's tree when the index is still the file s was stamped
// from; "" otherwise.
func (r *Repo) stagedTree(s Staged) string {
	if s.Tree == "" || s.Index == "" {
		return ""
	}
	if now, ok := r.IndexStamp(); !ok || now != s.Index {
		return ""
	}
	return s.Tree
}
