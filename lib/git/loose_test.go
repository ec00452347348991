package git

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDifferentialLooseReads holds the reads without git (looseShowFiles,
// looseTrees) to git cat-file's (ShowFiles' and readTrees' plain paths)
// on random commits: files, directories, links, a submodule entry, and
// paths that exist, are missing, are a directory, go through a file or a
// submodule; the same answers, the reads without git taken while every
// object is loose and declined once git gc has packed them.
func TestDifferentialLooseReads(t *testing.T) {
	r := newRepo(t)
	rng := rand.New(rand.NewPCG(13, 14))
	names := []string{"a", "b", "c.txt", "d"}
	randomPath := func() string {
		p := names[rng.IntN(len(names))]
		for range rng.IntN(3) {
			p += "/" + names[rng.IntN(len(names))]
		}
		return p
	}
	var commits []string
	for round := range 8 {
		for range 6 {
			p := randomPath()
			full := filepath.Join(r.Root(), p)
			switch rng.IntN(4) {
			case 0:
				os.RemoveAll(full)
			case 1:
				if os.MkdirAll(filepath.Dir(full), 0o755) == nil {
					os.Symlink("c.txt", full)
				}
			default:
				if os.MkdirAll(filepath.Dir(full), 0o755) == nil {
					os.WriteFile(full, []byte(fmt.Sprint(round, p, "\n")), 0o644)
				}
			}
		}
		write(t, r, "keep", fmt.Sprint(round))
		if err := r.AddAll(); err != nil {
			t.Fatal(err)
		}
		if round == 3 {
			if _, err := r.Run("update-index", "--add", "--cacheinfo", "160000,"+commits[0]+",sub"); err != nil {
				t.Fatal(err)
			}
		}
		commits = append(commits, commitAll(t, r, fmt.Sprint("round ", round)))
	}
	paths := []string{"keep", "sub", "sub/x", "nope", "a", "a/b", "a/b/c.txt", "keep/x"}
	for range 40 {
		paths = append(paths, randomPath())
	}
	compare := func(wantLoose bool) {
		t.Helper()
		for _, c := range commits {
			var files []File
			for _, p := range paths {
				files = append(files, File{Rev: c, Path: p})
			}
			t.Setenv(HermeticVar, "")
			want, err := r.ShowFiles(files...)
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv(HermeticVar, "1")
			got, loose := r.looseShowFiles(files)
			if loose != wantLoose {
				t.Fatalf("%.7s: read without git: %v, want %v", c, loose, wantLoose)
			}
			if loose {
				for i := range want {
					w, g := want[i], got[i]
					if w.OK != g.OK || string(w.Data) != string(g.Data) || (w.Err == nil) != (g.Err == nil) || w.Err != nil && w.Err.Error() != g.Err.Error() {
						t.Fatalf("%.7s:%s: without git %q %v %v; git cat-file %q %v %v", c, w.Path, g.Data, g.OK, g.Err, w.Data, w.OK, w.Err)
					}
				}
			}
			dirs := []string{"", "a", "a/b", "b", "d/a", "sub", "keep", "nope"}
			trees, loose := r.looseTrees(c, dirs)
			if loose != wantLoose {
				t.Fatalf("%.7s: trees without git: %v, want %v", c, loose, wantLoose)
			}
			t.Setenv(HermeticVar, "")
			wantTrees, err := r.readTrees(c, dirs, 20)
			if err != nil {
				t.Fatal(err)
			}
			if loose && !reflect.DeepEqual(trees, wantTrees) {
				t.Fatalf("%.7s: trees without git %v; git cat-file %v", c, trees, wantTrees)
			}
		}
	}
	compare(true)
	if _, err := r.Run("gc", "-q"); err != nil {
		t.Fatal(err)
	}
	compare(false)
}
