package git

import (
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// forgeEntry makes the index's entry for name name the blob id, with the
// stat data of name's file as it is now, leaving the index's cache of
// tree ids as it was (a hand-written index, as a session could write).
func forgeEntry(t *testing.T, r *Repo, name, id string) {
	t.Helper()
	raw, err := hex.DecodeString(id)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(r.Root(), name))
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	editIndex(t, r, name, func(entry []byte, _ int) {
		for i, v := range []uint32{uint32(sys.Ctim.Sec), uint32(sys.Ctim.Nsec), uint32(sys.Mtim.Sec), uint32(sys.Mtim.Nsec), uint32(sys.Dev), uint32(sys.Ino), 0o100644, sys.Uid, sys.Gid, uint32(st.Size())} {
			binary.BigEndian.PutUint32(entry[4*i:], v)
		}
		copy(entry[gitfile.IndexEntryFixed:], raw)
	})
}

// TestResetIndex: an index that hides changes from git (a file marked
// assume-unchanged, one marked skip-worktree, an entry changed under a
// cache of tree ids naming the base's trees) shows every change once
// ResetIndex made it again from the base, and git add stages them all,
// a file deleted under a skip-worktree mark among them; in a sparse
// checkout (core.sparseCheckout) such a mark on an absent file stays,
// as git sets it; what was staged is staged no more.
func TestResetIndex(t *testing.T) {
	r := newRepo(t)
	for _, f := range []string{"a.txt", "d/b.txt", "d/c.txt", "e/f.txt", "g.txt", "h", "i.txt"} {
		write(t, r, f, "orig\n")
	}
	base := commitAll(t, r, "base")
	mustRun(t, r, "update-index", "--assume-unchanged", "a.txt", "h")
	write(t, r, "a.txt", "hidden\n")
	write(t, r, "h", "hidden\n") // a name of one letter
	mustRun(t, r, "update-index", "--assume-unchanged", "i.txt")
	mustRun(t, r, "update-index", "--skip-worktree", "i.txt")
	write(t, r, "i.txt", "hidden\n") // both marks: "s"
	if out := mustRun(t, r, "ls-files", "-v", "i.txt"); string(out) != "s i.txt\n" {
		t.Fatalf("both marks: %q", out)
	}
	mustRun(t, r, "update-index", "--skip-worktree", "d/b.txt")
	write(t, r, "d/b.txt", "hidden\n")
	mustRun(t, r, "update-index", "--skip-worktree", "d/c.txt")
	if err := os.Remove(filepath.Join(r.Root(), "d", "c.txt")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, r, "write-tree")
	write(t, r, "e/f.txt", "hidden\n")
	forgeEntry(t, r, "e/f.txt", strings.TrimSpace(string(mustRun(t, r, "hash-object", "-w", "e/f.txt"))))
	write(t, r, "g.txt", "staged\n")
	mustRun(t, r, "add", "g.txt")
	if out := mustRun(t, r, "diff", "--name-only", "HEAD"); string(out) != "g.txt\n" {
		t.Fatalf("before: git sees %q, want only g.txt", out)
	}

	if err := r.ResetIndex(base); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, r, "ls-files", "-v"); string(out) != "H a.txt\nH d/b.txt\nH d/c.txt\nH e/f.txt\nH g.txt\nH h\nH i.txt\n" {
		t.Fatalf("marks after: %q", out)
	}
	if out := mustRun(t, r, "diff", "--cached", "--name-only", base); len(out) != 0 {
		t.Fatalf("still staged: %q", out)
	}
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, r, "diff", "--cached", "--name-only", base); string(out) != "a.txt\nd/b.txt\nd/c.txt\ne/f.txt\ng.txt\nh\ni.txt\n" {
		t.Fatalf("staged after git add -A: %q", out)
	}
	tree := strings.TrimSpace(string(mustRun(t, r, "write-tree")))
	if got := string(mustRun(t, r, "cat-file", "blob", tree+":e/f.txt")); got != "hidden\n" {
		t.Fatalf("e/f.txt in the tree: %q", got)
	}

	// A sparse checkout: the mark on the absent file stays.
	mustRun(t, r, "reset", "-q", "--hard", base)
	mustRun(t, r, "config", "core.sparseCheckout", "true")
	mustRun(t, r, "update-index", "--skip-worktree", "d/c.txt")
	if err := os.Remove(filepath.Join(r.Root(), "d", "c.txt")); err != nil {
		t.Fatal(err)
	}
	if err := r.ResetIndex(base); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, r, "ls-files", "-v", "d/c.txt"); string(out) != "S d/c.txt\n" {
		t.Fatalf("sparse checkout: %q", out)
	}
}
