package git

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Each commit's changes against its first parent, a root commit's
// against the empty tree, an empty commit's none; names with spaces and
// newlines come through whole.
func TestFirstParentChanges(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	c1 := commitAll(t, r, "one")
	write(t, r, "a.txt", "b\n")
	write(t, r, "dir/odd name\n.py", "x\n")
	c2 := commitAll(t, r, "two")
	if err := os.Remove(filepath.Join(r.Root(), "a.txt")); err != nil {
		t.Fatal(err)
	}
	c3 := commitAll(t, r, "three")
	if _, err := r.Run("commit", "-q", "--allow-empty", "-m", "four"); err != nil {
		t.Fatal(err)
	}
	c4, _ := r.HeadCommit()
	got, err := r.FirstParentChanges("", c4)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]PathChange{
		c1: {{"A", "a.txt"}},
		c2: {{"M", "a.txt"}, {"A", "dir/odd name\n.py"}},
		c3: {{"D", "a.txt"}},
		c4: nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes:\n%q\nwant\n%q", got, want)
	}
	got, err = r.FirstParentChanges(c2, c4)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[c1] != nil || !reflect.DeepEqual(got[c3], want[c3]) {
		t.Errorf("after %s: %q", c2, got)
	}
}

// One diff-tree for every pair, each pair's paths in its place, equal
// trees with none.
func TestDiffTrees(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	write(t, r, "d/b.txt", "b\n")
	commitAll(t, r, "one")
	t1 := treeID(t, r, "HEAD")
	write(t, r, "d/b.txt", "c\n")
	write(t, r, "new file.txt", "n\n")
	commitAll(t, r, "two")
	t2 := treeID(t, r, "HEAD")
	got, err := r.DiffTrees([][2]string{{t1, t2}, {t2, t2}, {t2, t1}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]PathChange{
		{{"M", "d/b.txt"}, {"A", "new file.txt"}},
		nil,
		{{"M", "d/b.txt"}, {"D", "new file.txt"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diffs:\n%q\nwant\n%q", got, want)
	}
	if got, err := r.DiffTrees(nil); err != nil || len(got) != 0 {
		t.Errorf("no pairs: %q %v", got, err)
	}
}

// The trailers asked for, by commit, in the message's order; another
// key's are left out, and a commit without any has none.
func TestTrailerLines(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a", "a\n")
	with := commitAll(t, r, "one\n\nbody\n\nTreeloop-Evidence: witness; 3 passed, 2 of 2 passed before\nTreeloop-Model: m\nTreeloop-Witness: t::a\nTreeloop-Witness: t::b")
	write(t, r, "a", "b\n")
	without := commitAll(t, r, "two")
	got, err := r.TrailerLines([]string{without, with}, "Treeloop-Evidence", "Treeloop-Witness")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		with:    {"Treeloop-Evidence: witness; 3 passed, 2 of 2 passed before", "Treeloop-Witness: t::a", "Treeloop-Witness: t::b"},
		without: nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("trailers:\n%q\nwant\n%q", got, want)
	}
}

func treeID(t *testing.T, r *Repo, rev string) string {
	t.Helper()
	out, err := r.Run("rev-parse", rev+"^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
