package seal_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/seal"
)

// dirsIndex is an Index over a run's directory whose current iteration is
// cur: every other directory settled (as lib/session's).
func dirsIndex(store seal.Store, cur string) seal.Index {
	return seal.Index{Rel: "seal-index", Store: store,
		Settled: func(rel string) bool { return !strings.HasPrefix(rel, cur+"/") },
		SettledDir: func(d string) bool {
			return d != cur && !strings.HasPrefix(cur, d+"/") && !strings.HasPrefix(d, cur+"/")
		},
		Now: func() time.Time { return time.Now().Add(time.Second) }} // past the racy window
}

// A settled directory indexed with the metadata it still has is neither
// listed nor its files' metadata read: a file rewritten in place in it
// between two seals is not indexed again, and Restore puts it back. A
// directory whose listing changed is listed again: its new file is
// indexed, and it is indexed again itself.
func TestTakeIndexedDirs(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"0001/agent.json", "0001/artifacts/a.txt", "0002/agent.json", "0003/begin.json"} {
		write(t, filepath.Join(root, f), f)
	}
	store := &memStore{blobs: map[string][]byte{}}
	ix := dirsIndex(store, "0003")
	if _, err := seal.TakeIndexed(root, nil, ix); err != nil {
		t.Fatal(err)
	}
	index := read(t, filepath.Join(root, "seal-index"))
	if !strings.HasPrefix(index, "treeloop seal index v2\n") {
		t.Fatalf("index:\n%s", index)
	}
	var dirs []string
	for _, line := range strings.Split(index, "\n") {
		if f := strings.Split(line, "\t"); f[0] == "dir" {
			dirs = append(dirs, f[len(f)-1])
		}
	}
	if !slices.Equal(dirs, []string{"0001", "0001/artifacts", "0002"}) {
		t.Errorf("directories indexed: %q, want the settled ones\n%s", dirs, index)
	}
	if strings.Contains(index, "0003") || strings.Contains(index, "\t.\n") {
		t.Errorf("the current iteration or the root indexed:\n%s", index)
	}

	// Between two seals: 0001/agent.json rewritten in place (its directory
	// unchanged), a file added to 0002.
	rewriteInPlace(t, filepath.Join(root, "0001/agent.json"))
	write(t, filepath.Join(root, "0002/late.json"), "late")
	store.put = nil
	s, err := seal.TakeIndexed(root, nil, ix)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(store.put, []string{"0002/late.json"}) {
		t.Errorf("the second seal copied %q, want only 0002/late.json (0001 is not listed)", store.put)
	}
	notes, err := s.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(notes, []string{"0001/agent.json changed"}) || read(t, filepath.Join(root, "0001/agent.json")) != "0001/agent.json" {
		t.Errorf("notes %q: the in-place rewrite is put back", notes)
	}
	if after := read(t, filepath.Join(root, "seal-index")); !strings.Contains(after, "\t0002/late.json\n") || !strings.Contains(after, "dir\t") {
		t.Errorf("index after:\n%s", after)
	}
}

// A session's changes in settled directories taken from the index are
// all found and put back, at any depth: an entry added to a directory
// whose listing was not read, one removed, a file replaced by a
// directory, a directory replaced by a file, a rename within one.
func TestTakeIndexedDirsRestore(t *testing.T) {
	for name, change := range map[string]func(root string){
		"add":         func(root string) { os.WriteFile(filepath.Join(root, "0001/new.txt"), []byte("x"), 0o644) },
		"add deep":    func(root string) { os.WriteFile(filepath.Join(root, "0001/artifacts/new.txt"), []byte("x"), 0o644) },
		"add dir":     func(root string) { os.MkdirAll(filepath.Join(root, "0002/d/e"), 0o755) },
		"remove":      func(root string) { os.Remove(filepath.Join(root, "0002/agent.json")) },
		"remove deep": func(root string) { os.Remove(filepath.Join(root, "0001/artifacts/a.txt")) },
		"rename": func(root string) {
			os.Rename(filepath.Join(root, "0001/agent.json"), filepath.Join(root, "0001/b.json"))
		},
		"file to dir": func(root string) {
			os.Remove(filepath.Join(root, "0002/agent.json"))
			os.Mkdir(filepath.Join(root, "0002/agent.json"), 0o755)
		},
		"dir to file": func(root string) {
			os.RemoveAll(filepath.Join(root, "0001/artifacts"))
			os.WriteFile(filepath.Join(root, "0001/artifacts"), nil, 0o644)
		},
		"rewrite in place": func(root string) { rewriteInPlaceNoT(filepath.Join(root, "0001/artifacts/a.txt")) },
		"hard link added": func(root string) {
			os.Link(filepath.Join(root, "0002/agent.json"), filepath.Join(root, "0001/agent2.json"))
		},
		"symlink added deep": func(root string) { os.Symlink("/etc/passwd", filepath.Join(root, "0001/artifacts/l")) },
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range []string{"0001/agent.json", "0001/artifacts/a.txt", "0002/agent.json", "0003/begin.json"} {
				write(t, filepath.Join(root, f), f)
			}
			ix := dirsIndex(&memStore{blobs: map[string][]byte{}}, "0003")
			before := contents(t, root)
			var s *seal.Seal
			for range 2 { // the second takes the settled directories from the index
				var err error
				if s, err = seal.TakeIndexed(root, nil, ix); err != nil {
					t.Fatal(err)
				}
			}
			sealed := contents(t, root)
			change(root)
			notes, err := s.Restore()
			if err != nil {
				t.Fatal(err)
			}
			if len(notes) == 0 {
				t.Errorf("no note for the change")
			}
			if got := contents(t, root); !equalContents(got, sealed) {
				t.Errorf("after Restore (notes %q):\n got %v\nwant %v", notes, got, sealed)
			}
			delete(sealed, "seal-index")
			if !equalContents(before, sealed) {
				t.Errorf("the seals changed the logs")
			}
		})
	}
}

// rewriteInPlaceNoT is rewriteInPlace for a change function.
func rewriteInPlaceNoT(p string) {
	st, err := os.Stat(p)
	if err != nil {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	f.WriteAt([]byte("X"), 0)
	f.Close()
	os.Chtimes(p, st.ModTime(), st.ModTime())
}

// contents is what root holds: each path's kind and bytes (a link's
// target).
func contents(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case rel == ".":
		case d.IsDir():
			out[rel] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = "file " + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func equalContents(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestDifferentialTakeIndexedDirs holds a seal that takes settled
// directories from the index to the plain indexed seal: on random run
// directories, random sessions (entries added, removed, rewritten,
// replaced, directories deleted or replaced, at any depth, in the
// current iteration too), both give the same notes and leave the same
// contents, which are what was sealed.
func TestDifferentialTakeIndexedDirs(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 30
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range rounds {
		iters := 1 + rng.IntN(5)
		cur := fmt.Sprintf("%04d", iters)
		var files []string
		for i := 1; i <= iters; i++ {
			for f := range 1 + rng.IntN(4) {
				p := fmt.Sprintf("%04d/f%d", i, f)
				if rng.IntN(3) == 0 {
					p = fmt.Sprintf("%04d/sub%d/f%d", i, rng.IntN(2), f)
				}
				files = append(files, p)
			}
		}
		roots := [2]string{t.TempDir(), t.TempDir()}
		var seals [2]*seal.Seal
		for k, root := range roots {
			for _, f := range files {
				write(t, filepath.Join(root, f), f)
			}
			ix := dirsIndex(&memStore{blobs: map[string][]byte{}}, cur)
			if k == 1 {
				ix.SettledDir = nil
			}
			for range 2 {
				var err error
				if seals[k], err = seal.TakeIndexed(root, nil, ix); err != nil {
					t.Fatal(err)
				}
			}
		}
		sealed := [2]map[string]string{contents(t, roots[0]), contents(t, roots[1])}
		ops := 1 + rng.IntN(3)
		var did []string
		for range ops {
			target := files[rng.IntN(len(files))]
			dir := filepath.Dir(target)
			op := rng.IntN(8)
			did = append(did, fmt.Sprintf("%d:%s", op, target))
			for _, root := range roots {
				p := filepath.Join(root, target)
				switch op {
				case 0:
					os.WriteFile(filepath.Join(root, dir, "added"), []byte("a"), 0o644)
				case 1:
					os.Remove(p)
				case 2:
					rewriteInPlaceNoT(p)
				case 3:
					os.RemoveAll(p)
					os.MkdirAll(filepath.Join(p, "x"), 0o755)
				case 4:
					os.MkdirAll(filepath.Join(root, dir, "newdir", "deeper"), 0o755)
				case 5:
					os.Rename(p, p+".moved")
				case 6: // the whole directory deleted
					os.RemoveAll(filepath.Join(root, dir))
				case 7: // the directory replaced by a file
					os.RemoveAll(filepath.Join(root, dir))
					os.WriteFile(filepath.Join(root, dir), []byte("f"), 0o644)
				}
			}
		}
		var notes [2][]string
		// Every other round, Restore's stat pass runs as it does on a
		// long run's logs, however few files are indexed.
		restore := seal.SetStatBatch(1 + 1000*(round%2))
		for k := range roots {
			var err error
			if notes[k], err = seals[k].Restore(); err != nil {
				t.Fatal(err)
			}
		}
		restore()
		if !slices.Equal(notes[0], notes[1]) {
			t.Fatalf("round %d (%v): notes\n by the directories' index %q\n by the files' alone     %q", round, did, notes[0], notes[1])
		}
		if len(notes[0]) == 0 {
			t.Fatalf("round %d (%v): no note", round, did)
		}
		for k, root := range roots {
			if got := contents(t, root); !equalContents(got, sealed[k]) {
				t.Fatalf("round %d (%v), seal %d: after Restore\n got %v\nwant %v", round, did, k, got, sealed[k])
			}
		}
	}
}

// A settled directory holding an entry the index cannot stand for (a
// link, a file it does not index, a directory not indexed in turn) is
// not indexed: it is listed at every seal, and a session's change under
// it is found.
func TestTakeIndexedDirsNotIndexable(t *testing.T) {
	for name, setup := range map[string]func(root string){
		"link":                 func(root string) { os.Symlink("a.txt", filepath.Join(root, "0001/sub/l")) },
		"file not indexed":     func(root string) { os.WriteFile(filepath.Join(root, "0001/sub/tab\tname"), nil, 0o644) },
		"directory not listed": func(root string) { os.Symlink("x", filepath.Join(root, "0001/sub/deeper/l")) },
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for _, f := range []string{"0001/agent.json", "0001/sub/a.txt", "0001/sub/deeper/b.txt", "0002/begin.json"} {
				write(t, filepath.Join(root, f), f)
			}
			setup(root)
			ix := dirsIndex(&memStore{blobs: map[string][]byte{}}, "0002")
			var s *seal.Seal
			for range 2 {
				var err error
				if s, err = seal.TakeIndexed(root, nil, ix); err != nil {
					t.Fatal(err)
				}
			}
			index := read(t, filepath.Join(root, "seal-index"))
			if strings.Contains(index, "\t0001\n") {
				t.Errorf("0001 indexed though an entry under it cannot be:\n%s", index)
			}
			write(t, filepath.Join(root, "0001/sub/deeper/new.txt"), "new")
			os.Remove(filepath.Join(root, "0001/sub/a.txt"))
			notes, err := s.Restore()
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"0001/sub/a.txt deleted", "0001/sub/deeper/new.txt added"}; !slices.Equal(notes, want) {
				t.Errorf("notes %q, want %q", notes, want)
			}
		})
	}
}

// A store that cannot take the copies leaves no directory indexed either:
// a directory's line stands for its files' lines.
func TestTakeIndexedDirsStoreFails(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "0001/agent.json"), "agent one")
	write(t, filepath.Join(root, "0002/begin.json"), "begin")
	ix := dirsIndex(&failingStore{}, "0002")
	var s *seal.Seal
	for range 2 {
		var err error
		if s, err = seal.TakeIndexed(root, nil, ix); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "seal-index")); !os.IsNotExist(err) {
		t.Fatalf("an index was written without copies: %v\n%s", err, read(t, filepath.Join(root, "seal-index")))
	}
	os.Remove(filepath.Join(root, "0001/agent.json"))
	if notes, err := s.Restore(); err != nil || !slices.Equal(notes, []string{"0001/agent.json deleted"}) || read(t, filepath.Join(root, "0001/agent.json")) != "agent one" {
		t.Fatalf("notes %q, err %v", notes, err)
	}
}

// A directory whose files were copied longer ago than Refresh is listed
// again, and its files copied again.
func TestTakeIndexedDirsRefresh(t *testing.T) {
	root, store, ix := settledRun(t)
	store.put = nil
	ix.Now = func() time.Time { return time.Now().Add(seal.Refresh + time.Hour) }
	if _, err := seal.TakeIndexed(root, nil, ix); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(store.put, []string{"0001/agent.json"}) {
		t.Errorf("copied %q past Refresh, want 0001/agent.json again", store.put)
	}
}

// An index with directory lines is one an older reader takes for empty
// (its header says v2), and CheckIndex, which puts back a killed
// session's changes from the index alone, checks the files and leaves
// the directories be.
func TestIndexDirLines(t *testing.T) {
	root, _, ix := settledRun(t)
	index := read(t, filepath.Join(root, "seal-index"))
	if !strings.HasPrefix(index, "treeloop seal index v2\n") || !strings.Contains(index, "\ndir\t") {
		t.Fatalf("index:\n%s", index)
	}
	// A directory changed (a file added) and a file rewritten: CheckIndex
	// puts the file back and sets no directory aside.
	write(t, filepath.Join(root, "0001/added.txt"), "x")
	rewriteInPlace(t, filepath.Join(root, "0001/agent.json"))
	notes, err := seal.CheckIndex(root, ix)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(notes, []string{"0001/agent.json changed"}) || read(t, filepath.Join(root, "0001/agent.json")) != "agent one" {
		t.Errorf("CheckIndex: notes %q", notes)
	}
	if _, err := os.Lstat(filepath.Join(root, "0001.forged")); !os.IsNotExist(err) {
		t.Errorf("a directory was set aside: %v", err)
	}
	// The same lines under the v1 header: malformed, so empty (nothing
	// checked, nothing set aside).
	write(t, filepath.Join(root, "seal-index"), strings.Replace(index, "v2", "v1", 1))
	rewriteInPlace(t, filepath.Join(root, "0001/agent.json"))
	if notes, err := seal.CheckIndex(root, ix); err != nil || len(notes) != 0 {
		t.Errorf("a v1 index with directory lines was read: notes %q, err %v", notes, err)
	}
}

// A seal of many indexed files (a long run's logs), whose files Restore
// stats several at a time, finds and puts back each change among them.
func TestRestoreManyIndexed(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		for j := range 10 {
			write(t, filepath.Join(root, fmt.Sprintf("%04d/f%d", i+1, j)), fmt.Sprint(i, j))
		}
	}
	write(t, filepath.Join(root, "0041/begin.json"), "begin")
	for _, settledDir := range []bool{true, false} {
		ix := dirsIndex(&memStore{blobs: map[string][]byte{}}, "0041")
		if !settledDir {
			ix.SettledDir = nil
		}
		var s *seal.Seal
		for range 2 {
			var err error
			if s, err = seal.TakeIndexed(root, nil, ix); err != nil {
				t.Fatal(err)
			}
		}
		sealed := contents(t, root)
		rewriteInPlace(t, filepath.Join(root, "0003/f1"))
		rewriteInPlace(t, filepath.Join(root, "0040/f9"))
		os.Remove(filepath.Join(root, "0020/f5"))
		os.Remove(filepath.Join(root, "0021/f5"))
		write(t, filepath.Join(root, "0021/f5"), "2 5") // the same bytes, another inode
		notes, err := s.Restore()
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"0003/f1 changed", "0020/f5 deleted", "0021/f5 changed", "0040/f9 changed"}; !slices.Equal(notes, want) {
			t.Errorf("SettledDir %v: notes %q, want %q", settledDir, notes, want)
		}
		if got := contents(t, root); !equalContents(got, sealed) {
			t.Errorf("SettledDir %v: not put back", settledDir)
		}
	}
}

// settledRun is a run's directory whose iteration 0001 is settled and
// 0002 current, sealed once by a dirsIndex over store.
func settledRun(t *testing.T) (string, *memStore, seal.Index) {
	t.Helper()
	root := t.TempDir()
	write(t, filepath.Join(root, "0001/agent.json"), "agent one")
	write(t, filepath.Join(root, "0002/begin.json"), "begin")
	store := &memStore{blobs: map[string][]byte{}}
	ix := dirsIndex(store, "0002")
	if _, err := seal.TakeIndexed(root, nil, ix); err != nil {
		t.Fatal(err)
	}
	return root, store, ix
}
