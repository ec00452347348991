package git

import (
	"strings"
	"testing"
)

// TestStagedTree: CommitIndexAs commits a Staged tree, in place of
// writing the index's, exactly while the index is the file it was stamped
// from (a tree other than the index's, with a current stamp, is what the
// commit gets: no write-tree ran); once the index changed, or with no
// stamp, it commits the index.
func TestStagedTree(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	commitAll(t, r, "base")
	treeOf := func(rev string) string {
		t.Helper()
		out, err := r.Run("rev-parse", rev+"^{tree}")
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	other := treeOf("HEAD") // a tree the index below does not have

	write(t, r, "b.txt", "b\n")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	tree, err := r.WriteTree("loop")
	if err != nil {
		t.Fatal(err)
	}
	stamp, ok := r.IndexStamp()
	if !ok {
		t.Fatal("no stamp for a plain .git/index")
	}
	if again, _ := r.IndexStamp(); again != stamp {
		t.Fatalf("the stamp of an unchanged index changed: %s, then %s", stamp, again)
	}
	if tree == other {
		t.Fatal("the staged tree is HEAD's")
	}

	// The index as stamped: the recorded tree is committed as it is.
	c, err := r.CommitIndexAs("loop", "staged", Staged{Tree: other, Index: stamp})
	if err != nil {
		t.Fatal(err)
	}
	if got := treeOf(c); got != other {
		t.Fatalf("commit tree %s, want the recorded %s (no write-tree)", got, other)
	}

	// The index changed since the stamp: the index is committed.
	write(t, r, "c.txt", "c\n")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if now, _ := r.IndexStamp(); now == stamp {
		t.Fatal("the stamp did not change with the index")
	}
	c, err = r.CommitIndexAs("loop", "changed", Staged{Tree: other, Index: stamp})
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.WriteTree("loop")
	if err != nil {
		t.Fatal(err)
	}
	if got := treeOf(c); got != want || got == other {
		t.Fatalf("commit tree %s, want the index's %s", got, want)
	}

	// A tree without a stamp is not taken.
	if got := r.stagedTree(Staged{Tree: other}); got != "" {
		t.Fatalf("a tree without a stamp was taken: %s", got)
	}

	// GIT_INDEX_FILE: the index is not .git/index, no stamp.
	t.Setenv("GIT_INDEX_FILE", r.Root()+"/.git/index")
	if s, ok := r.IndexStamp(); ok {
		t.Fatalf("a stamp under GIT_INDEX_FILE: %s", s)
	}
}
