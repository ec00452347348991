package git

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rawTree writes a tree object of the entries (mode, name, hex id) as
// given, in that order (git hash-object --literally: fsck's warnings
// aside), and returns a commit of it.
func rawTree(t *testing.T, r *Repo, entries ...[3]string) string {
	t.Helper()
	var body bytes.Buffer
	for _, e := range entries {
		id, err := hex.DecodeString(e[2])
		if err != nil {
			t.Fatal(err)
		}
		body.WriteString(e[0] + " " + e[1] + "\x00")
		body.Write(id)
	}
	tree, err := run(r.Root(), body.Bytes(), "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	commit, err := run(r.Root(), []byte("crafted\n"), "commit-tree", strings.TrimSpace(string(tree)))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(commit))
}

func revParse(t *testing.T, r *Repo, rev string) string {
	t.Helper()
	out, err := r.Run("rev-parse", rev)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestZeroPaddedTreeStaged: a base whose root tree spells a directory's
// mode 040000 (as old tools did; git fsck warns) and a file staged inside
// that directory: the step's tree is write-tree's, every file of the
// directory kept, read and written without git or with it.
func TestZeroPaddedTreeStaged(t *testing.T) {
	bothWays(t, func(t *testing.T) {
		r := newRepo(t)
		write(t, r, "a.txt", "a\n")
		write(t, r, "y/three.txt", "3\n")
		write(t, r, "z/one.txt", "1\n")
		write(t, r, "z/two.txt", "2\n")
		first := commitAll(t, r, "plain")
		base := rawTree(t, r,
			[3]string{"100644", "a.txt", revParse(t, r, first+":a.txt")},
			[3]string{"040000", "y", revParse(t, r, first+":y")},
			[3]string{"040000", "z", revParse(t, r, first+":z")})
		if _, err := r.Run("reset", "-q", "--hard", base); err != nil {
			t.Fatal(err)
		}
		write(t, r, "z/new.txt", "new\n")
		if _, err := r.Run("add", "z/new.txt"); err != nil {
			t.Fatal(err)
		}
		if _, ok := r.looseTrees(base, []string{"", "z"}); ok {
			t.Fatal("looseTrees read a tree git did not write as it writes trees")
		}
		cs, err := r.StagedChanges(base)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.TreeWith(base, cs); err != ErrTreeByHand {
			t.Fatalf("TreeWith: %v, want ErrTreeByHand", err)
		}
		got, _, err := r.IndexTree(base, "test")
		if err != nil {
			t.Fatal(err)
		}
		ls, _ := r.Run("ls-tree", "-r", "--name-only", got)
		if want := "a.txt\ny/three.txt\nz/new.txt\nz/one.txt\nz/two.txt\n"; string(ls) != want {
			t.Fatalf("IndexTree's tree %s holds\n%s", got, ls)
		}
	})
}

// TestMalformedTreesAskGit: at a commit whose tree names a file twice,
// lists its entries out of git's order, or gives a blob a directory's
// mode, ShowFiles in a step's hermetic git answers as git does (the
// loose read declines and git is asked).
func TestMalformedTreesAskGit(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "X\n")
	write(t, r, "b.txt", "Y\n")
	first := commitAll(t, r, "two files")
	x, y := revParse(t, r, first+":a.txt"), revParse(t, r, first+":b.txt")
	for name, commit := range map[string]string{
		"twice":        rawTree(t, r, [3]string{"100644", "a.txt", x}, [3]string{"100644", "a.txt", y}),
		"out of order": rawTree(t, r, [3]string{"100644", "b.txt", y}, [3]string{"100644", "a.txt", x}),
		"blob as tree": rawTree(t, r, [3]string{"40000", "a.txt", x}),
		"zero padded":  rawTree(t, r, [3]string{"100644", "a.txt", x}, [3]string{"040000", "d", revParse(t, r, first+"^{tree}")}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(HermeticVar, "1")
			files := []File{{Rev: commit, Path: "a.txt"}, {Rev: commit, Path: "d/b.txt"}}
			if _, ok := r.looseShowFiles(files); ok {
				t.Fatal("looseShowFiles answered")
			}
			loose, lerr := r.ShowFiles(files...)
			t.Setenv(HermeticVar, "")
			plain, perr := r.ShowFiles(files...)
			if (lerr == nil) != (perr == nil) || len(loose) != len(plain) {
				t.Fatalf("hermetic: %v %+v; git: %v %+v", lerr, loose, perr, plain)
			}
			for i := range loose {
				if string(loose[i].Data) != string(plain[i].Data) || loose[i].OK != plain[i].OK || (loose[i].Err == nil) != (plain[i].Err == nil) {
					t.Fatalf("%s: hermetic %+v, git %+v", files[i].Path, loose[i], plain[i])
				}
			}
		})
	}
}

// TestLooseReadSkipsFIFO: a FIFO left at the loose name of an object git
// has packed neither blocks a read in the step's hermetic git nor changes
// its answer: it is no loose object, and git answers from the pack.
func TestLooseReadSkipsFIFO(t *testing.T) {
	r := newRepo(t)
	write(t, r, "config.toml", "x\n")
	base := commitAll(t, r, "base")
	if _, err := r.Run("gc", "-q"); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(r.Root(), ".git", "objects", base[:2], base[2:])
	if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(obj, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(HermeticVar, "1")
	type answer struct {
		files []File
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		files, err := r.ShowFiles(File{Rev: base, Path: "config.toml"})
		done <- answer{files, err}
	}()
	select {
	case a := <-done:
		if a.err != nil || !a.files[0].OK || string(a.files[0].Data) != "x\n" {
			t.Fatalf("ShowFiles: %+v, %v", a.files, a.err)
		}
	case <-time.After(time.Minute):
		if f, err := os.OpenFile(obj, os.O_WRONLY, 0); err == nil {
			f.Close() // lets the blocked read go
		}
		t.Fatal("ShowFiles blocked on the FIFO")
	}
}
