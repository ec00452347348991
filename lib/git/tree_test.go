package git

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// treeOfIndex checks TreeWith against git write-tree on what is staged:
// the same tree id, and the index left as it was (byte for byte).
func treeOfIndex(t *testing.T, r *Repo, base string) string {
	t.Helper()
	index := filepath.Join(r.Root(), ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := r.StagedChanges(base)
	if err != nil {
		t.Fatal(err)
	}
	if _, loose := r.treesWritable(cs, len(base)/2); loose != (os.Getenv(HermeticVar) == "1") {
		t.Fatalf("trees written without git: %v, in hermetic git: %q", loose, os.Getenv(HermeticVar))
	}
	got, err := r.TreeWith(base, cs)
	if err != nil {
		t.Fatalf("TreeWith: %v (changes %+v)", err, cs)
	}
	if after, _ := os.ReadFile(index); string(after) != string(before) {
		t.Fatal("TreeWith changed the index")
	}
	// Written before write-tree writes it too.
	if out, err := r.Run("cat-file", "-t", got); err != nil || strings.TrimSpace(string(out)) != "tree" {
		t.Fatalf("TreeWith's tree %s: %q, %v", got, out, err)
	}
	out, err := r.Run("write-tree")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(out)); got != want {
		ls, _ := r.Run("ls-tree", "-r", "-t", got)
		lw, _ := r.Run("ls-tree", "-r", "-t", want)
		t.Fatalf("TreeWith: tree %s, write-tree %s\n%s---\n%s", got, want, ls, lw)
	}
	return got
}

// TestDifferentialTreeWith: the cases where building by hand could go wrong
// (new and emptied directories, a file that becomes a directory and back,
// modes, a symbolic link, a submodule, names that sort around "/", spaces
// and non-ASCII names) give write-tree's tree.
func TestDifferentialTreeWith(t *testing.T) {
	bothWays(t, differentialTreeWith)
}

// bothWays runs test outside hermetic git, where git reads and writes
// every object (git cat-file, git mktree), and in a step's hermetic git,
// where loose objects are read and written without it (looseShowFiles,
// looseTrees, treesWritable).
func bothWays(t *testing.T, test func(t *testing.T)) {
	t.Run("git", test)
	t.Run("loose", func(t *testing.T) {
		t.Setenv(HermeticVar, "1")
		test(t)
	})
}

func differentialTreeWith(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	write(t, r, "dir/b.txt", "b\n")
	write(t, r, "dir/sub/c.txt", "c\n")
	write(t, r, "gone/only.txt", "x\n")
	write(t, r, "f", "file then dir\n")
	write(t, r, "d/inner.txt", "dir then file\n")
	base := commitAll(t, r, "base")

	write(t, r, "a.txt", "changed\n")
	write(t, r, "new/deep/er/x.txt", "new\n")
	os.RemoveAll(filepath.Join(r.Root(), "gone"))
	os.Remove(filepath.Join(r.Root(), "f"))
	write(t, r, "f/now.txt", "a directory\n")
	os.RemoveAll(filepath.Join(r.Root(), "d"))
	write(t, r, "d", "a file\n")
	os.Chmod(filepath.Join(r.Root(), "dir/b.txt"), 0o755)
	os.Symlink("a.txt", filepath.Join(r.Root(), "dir/link"))
	write(t, r, "dir/sub-a", "sorts after sub/\n")
	write(t, r, "dir/sub.txt", "sorts before sub/\n")
	write(t, r, "dir/with space é.txt", "name\n")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	// A submodule entry (gitlink), as git submodule add would stage it.
	if _, err := r.Run("update-index", "--add", "--cacheinfo", "160000,"+base+",mod"); err != nil {
		t.Fatal(err)
	}
	tree := treeOfIndex(t, r, base)

	// Nothing staged: base's own tree.
	if _, err := r.Run("commit", "-q", "-m", "second"); err != nil {
		t.Fatal(err)
	}
	head, _ := r.HeadCommit()
	if got := treeOfIndex(t, r, head); got != tree {
		t.Fatalf("unchanged index: tree %s, want %s", got, tree)
	}
	if out, err := r.Run("fsck", "--strict"); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
}

// TestDifferentialTreeWithRandom: rounds of random additions, edits, deletions and
// moves between directories, each committed, TreeWith equal to
// write-tree every round.
func TestDifferentialTreeWithRandom(t *testing.T) {
	bothWays(t, differentialTreeWithRandom)
}

func differentialTreeWithRandom(t *testing.T) {
	r := newRepo(t)
	rng := rand.New(rand.NewSource(16))
	write(t, r, "seed.txt", "seed\n")
	head := commitAll(t, r, "seed")
	var files []string
	for round := 0; round < rounds(25, 10); round++ {
		for op := 0; op < 1+rng.Intn(8); op++ {
			switch k := rng.Intn(4); {
			case k == 0 || len(files) == 0:
				p := fmt.Sprintf("d%d/e%d/f%d.txt", rng.Intn(3), rng.Intn(3), rng.Intn(5))
				if rng.Intn(3) == 0 {
					p = fmt.Sprintf("top%d", rng.Intn(4))
				}
				if err := os.MkdirAll(filepath.Dir(filepath.Join(r.Root(), p)), 0o755); err != nil {
					continue // a file stands where the directory would go
				}
				if os.WriteFile(filepath.Join(r.Root(), p), []byte(fmt.Sprint(round, op, "\n")), 0o644) == nil {
					files = append(files, p)
				}
			case k == 1:
				p := files[rng.Intn(len(files))]
				os.WriteFile(filepath.Join(r.Root(), p), []byte(fmt.Sprint("edit ", round, "\n")), 0o644)
			default:
				i := rng.Intn(len(files))
				os.Remove(filepath.Join(r.Root(), files[i]))
				files = append(files[:i], files[i+1:]...)
			}
		}
		if err := r.AddAll(); err != nil {
			t.Fatal(err)
		}
		if cs, _ := r.StagedChanges(head); len(cs) > 0 {
			if _, err := r.TreeWith(head, cs); errors.Is(err, ErrTreeByHand) {
				continue // everything deleted: write-tree's case
			}
		}
		treeOfIndex(t, r, head)
		if _, err := r.Run("commit", "-q", "--allow-empty", "-m", fmt.Sprint("round ", round)); err != nil {
			t.Fatal(err)
		}
		head, _ = r.HeadCommit()
	}
}

// TestTreeWithRefuses: a conflict and an emptied tree are left to
// write-tree (ErrTreeByHand), and a change whose object does not exist is
// an error, as write-tree's, in hermetic git too (where the trees are
// otherwise written without git), as is one naming an object of
// another type.
func TestTreeWithRefuses(t *testing.T) {
	bothWays(t, treeWithRefuses)
}

func treeWithRefuses(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	if _, err := r.TreeWith(base, []StagedChange{{Mode: "100644", ID: strings.Repeat("1", 40), Path: "a.txt", Unmerged: true}}); !errors.Is(err, ErrTreeByHand) {
		t.Fatalf("a conflict: %v, want ErrTreeByHand", err)
	}
	if _, err := r.TreeWith(base, []StagedChange{{Mode: "000000", ID: strings.Repeat("0", 40), Path: "a.txt"}}); !errors.Is(err, ErrTreeByHand) {
		t.Fatalf("an empty tree: %v, want ErrTreeByHand", err)
	}
	if _, err := r.TreeWith(base, []StagedChange{{Mode: "100644", ID: strings.Repeat("1", 40), Path: "b.txt"}}); err == nil || errors.Is(err, ErrTreeByHand) {
		t.Fatalf("a missing object: %v, want git mktree's error", err)
	}
	tree, err := r.Run("rev-parse", base+"^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.TreeWith(base, []StagedChange{{Mode: "100644", ID: strings.TrimSpace(string(tree)), Path: "b.txt"}}); err == nil || errors.Is(err, ErrTreeByHand) {
		t.Fatalf("a tree named as a file: %v, want git mktree's error", err)
	}
	if _, err := r.TreeWith(base, []StagedChange{{Mode: "100644", ID: strings.Repeat("1", 40), Path: "../b.txt"}}); !errors.Is(err, ErrTreeByHand) {
		t.Fatalf("a path outside: %v, want ErrTreeByHand", err)
	}
}

// BenchmarkTreeOfIndex: the tree of an index with one file changed, by
// git write-tree (which also rewrites the index to record its tree
// cache) and by StagedChanges and TreeWith, in a repository of 1,000 and
// of 50,000 files (bench/fastpaths.md).
func BenchmarkTreeOfIndex(b *testing.B) {
	for _, n := range []int{1000, 50000} {
		r := benchRepo(b, n)
		dir := r.Root()
		head, _ := r.HeadCommit()
		stage := func(i int) {
			b.StopTimer()
			os.WriteFile(filepath.Join(dir, "src/d1/f1.go"), []byte(fmt.Sprint("package d // ", i, "\n")), 0o644)
			if _, err := run(dir, nil, "add", "-A"); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.Run(fmt.Sprintf("files=%d/write-tree", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				stage(i)
				if _, err := r.Run("write-tree"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("files=%d/TreeWith", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				stage(i)
				cs, err := r.StagedChanges(head)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.TreeWith(head, cs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestIndexTree: with few stale directories in the index's tree cache the
// tree is built by hand and the index is left as it was; with more than
// maxStaleTrees, write-tree writes it and fills the cache in again. Both
// give write-tree's tree.
func TestIndexTree(t *testing.T) {
	r := newRepo(t)
	old := time.Now().Add(-time.Hour) // not racily clean: git add hashes only what changed
	for i := 0; i < maxStaleTrees+8; i++ {
		name := fmt.Sprintf("d%02d/sub/f.txt", i)
		write(t, r, name, "a\n")
		os.Chtimes(filepath.Join(r.Root(), name), old, old)
	}
	base := commitAll(t, r, "base")
	if n, ok := r.staleTrees(); !ok || n != 0 {
		t.Fatalf("after git commit: %d stale trees (ok %v), want 0", n, ok)
	}
	write(t, r, "d00/sub/f.txt", "changed\n")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	// The root, d00 and d00/sub.
	if n, ok := r.staleTrees(); !ok || n != 3 {
		t.Fatalf("one file staged: %d stale trees (ok %v), want 3", n, ok)
	}
	stamp, _ := r.IndexStamp()
	tree, cs, err := r.IndexTree(base, "loop")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Path != "d00/sub/f.txt" || cs[0].OldMode != "100644" || cs[0].Mode != "100644" {
		t.Fatalf("IndexTree's changes: %+v", cs)
	}
	if after, _ := r.IndexStamp(); after != stamp {
		t.Fatal("IndexTree rewrote the index with few stale trees")
	}
	if want := treeOfIndex(t, r, base); tree != want {
		t.Fatalf("IndexTree %s, write-tree %s", tree, want)
	}

	// Every directory changed: more than maxStaleTrees stale, so write-tree.
	base = commitAll(t, r, "second")
	for i := 0; i < maxStaleTrees+8; i++ {
		write(t, r, fmt.Sprintf("d%02d/sub/f.txt", i), "b\n")
	}
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	if n, _ := r.staleTrees(); n <= maxStaleTrees {
		t.Fatalf("every directory staged: %d stale trees, want more than %d", n, maxStaleTrees)
	}
	stamp, _ = r.IndexStamp()
	tree, cs, err = r.IndexTree(base, "loop")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != maxStaleTrees+8 {
		t.Fatalf("IndexTree's changes, write-tree's way: %d, want %d", len(cs), maxStaleTrees+8)
	}
	if after, _ := r.IndexStamp(); after == stamp {
		t.Fatal("IndexTree left the index as it was with many stale trees: write-tree was not run")
	}
	if n, ok := r.staleTrees(); !ok || n != 0 {
		t.Fatalf("after write-tree: %d stale trees (ok %v), want 0", n, ok)
	}
	out, _ := r.Run("write-tree")
	if want := strings.TrimSpace(string(out)); tree != want {
		t.Fatalf("IndexTree %s, write-tree %s", tree, want)
	}
}
