package git

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// sameAsLsFiles checks that the index reader answers, and answers what
// git does, for each scope: the hidden paths `git ls-files -v` tags, the
// tracked paths `git ls-files --cached` lists.
func sameAsLsFiles(t *testing.T, r *Repo, scopes ...[]string) {
	t.Helper()
	for _, scope := range append(scopes, nil) {
		a, s, ok := r.hiddenInIndex(scope)
		if !ok {
			t.Fatalf("scope %q: the index reader fell back to git on a plain index", scope)
		}
		wa, ws, err := r.hiddenByGit(scope)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, wa) || !slices.Equal(s, ws) {
			t.Errorf("scope %q: index reader assumed %q skipped %q; git ls-files -v: %q %q", scope, a, s, wa, ws)
		}
		if ga, gs, err := r.HiddenPaths(scope...); err != nil || !slices.Equal(ga, wa) || !slices.Equal(gs, ws) {
			t.Errorf("scope %q: HiddenPaths = %q %q %v; git ls-files -v: %q %q", scope, ga, gs, err, wa, ws)
		}
		paths, ok := r.trackedInIndex(scope)
		if !ok {
			t.Fatalf("scope %q: the index reader fell back to git ls-files --cached on a plain index", scope)
		}
		want, err := r.trackedByGit(scope)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(paths, want) {
			t.Errorf("scope %q: index reader tracked %q; git ls-files --cached: %q", scope, paths, want)
		}
	}
}

// rewriteIndex changes the on-disk flags of the index entries named name
// (the 16-bit flags: or, and not) and writes the index back with a valid
// checksum: index states git's own commands never write but a session
// could.
func rewriteIndex(t *testing.T, r *Repo, name string, set, clear uint16) {
	t.Helper()
	editIndex(t, r, name, func(entry []byte, q int) {
		binary.BigEndian.PutUint16(entry[q:], binary.BigEndian.Uint16(entry[q:])|set&^clear)
	})
}

// editIndex rewrites .git/index (version 2 or 3, SHA-1) by hand: edit is
// given the entry of name (from its first byte) and the offset of its
// flags in it, and the checksum is made again.
func editIndex(t *testing.T, r *Repo, name string, edit func(entry []byte, q int)) {
	t.Helper()
	p := filepath.Join(r.Root(), ".git", "index")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	off, count := gitfile.IndexHeaderSize, int(binary.BigEndian.Uint32(data[8:12]))
	found := false
	for range count {
		q := off + gitfile.IndexEntryFixed + gitfile.IndexSHA1Size
		flags := binary.BigEndian.Uint16(data[q:])
		fixed := q + 2
		if flags&gitfile.FlagExtended != 0 {
			fixed += 2
		}
		n := strings.IndexByte(string(data[fixed:]), 0)
		if string(data[fixed:fixed+n]) == name {
			edit(data[off:], q-off)
			found = true
		}
		off += (fixed - off + n + 8) &^ 7
	}
	if !found {
		t.Fatalf("no index entry %s", name)
	}
	sum := sha1.Sum(data[:len(data)-sha1.Size])
	copy(data[len(data)-sha1.Size:], sum[:])
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDifferentialIndexReader: the index reader (gitfile.Hidden,
// gitfile.Tracked) agrees with git ls-files -v and ls-files --cached on
// the marks, the scopes, long paths, links, submodules, intent-to-add
// entries, extended flags (version 3) and unmerged entries, including
// marks only a hand-written index holds.
func TestDifferentialIndexReader(t *testing.T) {
	r := newRepo(t)
	for _, f := range []string{"a", "b", "c", "d/x", "d/y", "d/sub/z", "dd", "d.txt", "e f"} {
		write(t, r, f, f+"\n")
	}
	if err := os.Symlink("a", filepath.Join(r.Root(), "link")); err != nil {
		t.Fatal(err)
	}
	commitAll(t, r, "files")
	scopes := [][]string{{"a"}, {"d"}, {"d/x", "b"}, {"d/sub"}, {"nothing"}, {"d/sub/z", "e f", "dd"}}
	sameAsLsFiles(t, r, scopes...) // version 2, nothing marked

	// Long paths (the 12-bit length field saturates at 0xfff), a
	// submodule and an intent-to-add entry.
	blob := strings.TrimSpace(string(mustRun(t, r, "hash-object", "-w", "a")))
	long := strings.Repeat(strings.Repeat("l", 200)+"/", 21) + "end"
	exact := strings.Repeat(strings.Repeat("m", 4094)[:4094], 1) + "x" // 0xfff
	for _, p := range []string{long, exact[:200] + "/" + exact[201:]} {
		mustRun(t, r, "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	head := strings.TrimSpace(string(mustRun(t, r, "rev-parse", "HEAD")))
	mustRun(t, r, "update-index", "--add", "--cacheinfo", "160000,"+head+",sub")
	write(t, r, "new", "new\n")
	mustRun(t, r, "add", "-N", "new") // extended flags: version 3
	mustRun(t, r, "update-index", "--assume-unchanged", "a", "d/x", long)
	mustRun(t, r, "update-index", "--skip-worktree", "b", "d/sub/z")
	mustRun(t, r, "update-index", "--assume-unchanged", "b") // both marks: "s"
	if v := binary.BigEndian.Uint32(readIndexFile(t, r)[4:8]); v != 3 {
		t.Fatalf("index version %d, want 3 (extended flags)", v)
	}
	sameAsLsFiles(t, r, append(scopes, []string{long[:201] + strings.Repeat("l", 200)}, []string{"sub", "new"})...)
	if a, s, _ := r.hiddenByGit(nil); !slices.Equal(a, []string{"a", "d/x", long}) || !slices.Equal(s, []string{"b", "d/sub/z"}) {
		t.Fatalf("git ls-files -v: assumed %q, skipped %q", a, s)
	}

	// An unmerged path: three entries; git refuses to mark them, a
	// hand-written index may (ls-files: "m").
	mustRun(t, r, "update-index", "--no-assume-unchanged", "a", "d/x", long)
	mustRun(t, r, "update-index", "--no-skip-worktree", "b", "d/sub/z")
	mustRun(t, r, "rm", "-q", "--cached", "new", "sub", long)
	commitAll(t, r, "more")
	mustRun(t, r, "checkout", "-q", "-b", "side")
	write(t, r, "c", "side\n")
	commitAll(t, r, "side")
	mustRun(t, r, "checkout", "-q", "main")
	write(t, r, "c", "main\n")
	commitAll(t, r, "main")
	if _, err := r.Run("merge", "-q", "side"); err == nil {
		t.Fatal("the merge did not conflict")
	}
	sameAsLsFiles(t, r, []string{"c"})
	rewriteIndex(t, r, "c", gitfile.FlagAssumeValid, 0)
	rewriteIndex(t, r, "a", gitfile.FlagAssumeValid, 0)
	sameAsLsFiles(t, r, []string{"c"}, []string{"a", "c"})
	if a, _, _ := r.hiddenByGit(nil); !slices.Equal(a, []string{"a", "b", "c", "c", "c"}) {
		t.Fatalf("git ls-files -v: assumed %q, want a, b and c's three stages", a)
	}
}

func mustRun(t *testing.T, r *Repo, args ...string) []byte {
	t.Helper()
	out, err := r.Run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readIndexFile(t *testing.T, r *Repo) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(r.Root(), ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDifferentialIndexReaderRefuses: every index the reader does not
// know exactly (version 4, split, sparse, SHA-256, a bad checksum, an
// unknown flag) is refused with gitfile.ErrNotPlain and left to git,
// which still answers HiddenPaths and TrackedPaths.
func TestDifferentialIndexReaderRefuses(t *testing.T) {
	setup := func(t *testing.T, initArgs ...string) *Repo {
		r := newRepo(t)
		if len(initArgs) > 0 {
			if err := os.RemoveAll(filepath.Join(r.Root(), ".git")); err != nil {
				t.Fatal(err)
			}
			if _, err := run(r.Root(), nil, append([]string{"init", "-q", "-b", "main"}, initArgs...)...); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range []string{"a", "b", "d/x"} {
			write(t, r, f, f+"\n")
		}
		commitAll(t, r, "files")
		mustRun(t, r, "update-index", "--assume-unchanged", "a")
		return r
	}
	for _, c := range []struct {
		name string
		init []string
		make func(t *testing.T, r *Repo)
	}{
		{"version 4", nil, func(t *testing.T, r *Repo) { mustRun(t, r, "update-index", "--index-version", "4") }},
		{"split index", nil, func(t *testing.T, r *Repo) { mustRun(t, r, "update-index", "--split-index") }},
		{"sparse index", nil, func(t *testing.T, r *Repo) {
			mustRun(t, r, "sparse-checkout", "init", "--cone", "--sparse-index")
			mustRun(t, r, "sparse-checkout", "set", "d")
		}},
		{"SHA-256", []string{"--object-format=sha256"}, func(*testing.T, *Repo) {}},
		{"checksum", nil, func(t *testing.T, r *Repo) {
			// A flipped mark without a new checksum: git refuses it.
			data := readIndexFile(t, r)
			data[gitfile.IndexHeaderSize+gitfile.IndexEntryFixed+gitfile.IndexSHA1Size] ^= 0x80
			if err := os.WriteFile(filepath.Join(r.Root(), ".git", "index"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"unknown extended flag", nil, func(t *testing.T, r *Repo) {
			mustRun(t, r, "update-index", "--skip-worktree", "b")
			data := readIndexFile(t, r)
			// b's entry follows a's: 62 bytes and "a" padded to 8.
			off := gitfile.IndexHeaderSize + 64
			if string(data[off+gitfile.IndexEntryFixed+gitfile.IndexSHA1Size+4:][:1]) != "b" {
				t.Fatalf("entry layout: %q", data[off:off+80])
			}
			data[off+gitfile.IndexEntryFixed+gitfile.IndexSHA1Size+2] |= 0x10
			sum := sha1.Sum(data[:len(data)-sha1.Size])
			copy(data[len(data)-sha1.Size:], sum[:])
			if err := os.WriteFile(filepath.Join(r.Root(), ".git", "index"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"GIT_INDEX_FILE", nil, func(t *testing.T, r *Repo) {
			t.Setenv("GIT_INDEX_FILE", filepath.Join(r.Root(), ".git", "index"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := setup(t, c.init...)
			c.make(t, r)
			if a, s, ok := r.hiddenInIndex(nil); ok {
				t.Fatalf("the index reader answered (%q, %q), want git", a, s)
			}
			if c.name != "GIT_INDEX_FILE" {
				if _, _, err := gitfile.Hidden(readIndexFile(t, r), nil); !errors.Is(err, gitfile.ErrNotPlain) {
					t.Errorf("gitfile.Hidden: %v, want ErrNotPlain", err)
				}
			}
			wa, ws, werr := r.hiddenByGit(nil)
			a, s, err := r.HiddenPaths()
			if !slices.Equal(a, wa) || !slices.Equal(s, ws) || (err == nil) != (werr == nil) {
				t.Errorf("HiddenPaths = %q %q %v; git: %q %q %v", a, s, err, wa, ws, werr)
			}
			wt, werr := r.trackedByGit(nil)
			if tp, err := r.TrackedPaths(); !slices.Equal(tp, wt) || (err == nil) != (werr == nil) {
				t.Errorf("TrackedPaths = %q %v; git: %q %v", tp, err, wt, werr)
			}
		})
	}
	// A scope that is not a clean relative path is git's to read.
	r := setup(t)
	for _, scope := range [][]string{{"./a"}, {"d/"}, {""}, {"."}, {"../x"}, {"/abs"}} {
		if _, _, ok := r.hiddenInIndex(scope); ok {
			t.Errorf("scope %q: the index reader answered, want git", scope)
		}
	}
}

// TestDifferentialIndexReaderRandom: repositories made at random by git
// (files at random depths, names with spaces and non-ASCII bytes, links,
// assume-unchanged and skip-worktree marks, intent-to-add entries,
// removals, a conflict, index version 2 or 3), the index reader
// answering as git ls-files -v and --cached for random scopes.
func TestDifferentialIndexReaderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	names := []string{"a", "b.txt", "d/x", "d/y z", "d/sub/é", "dd", "d.txt", "e/f/g/h", "e/f2", "z"}
	for round := range rounds(8, 3) {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			r := newRepo(t)
			var files []string
			for _, n := range names {
				if rng.IntN(3) > 0 {
					write(t, r, n, n+"\n")
					files = append(files, n)
				}
			}
			write(t, r, "base", "base\n")
			files = append(files, "base")
			if rng.IntN(2) == 0 {
				if err := os.Symlink("base", filepath.Join(r.Root(), "link")); err != nil {
					t.Fatal(err)
				}
				files = append(files, "link")
			}
			commitAll(t, r, "files")
			if rng.IntN(3) == 0 {
				conflict(t, r, "base") // git marks no stage of it; a hand-written index may
				files = slices.DeleteFunc(files, func(f string) bool { return f == "base" })
				if rng.IntN(2) == 0 {
					rewriteIndex(t, r, "base", gitfile.FlagAssumeValid, 0)
				}
			}
			for _, f := range files {
				switch rng.IntN(6) {
				case 0:
					mustRun(t, r, "update-index", "--assume-unchanged", "--", f)
				case 1:
					mustRun(t, r, "update-index", "--skip-worktree", "--", f)
				case 2:
					mustRun(t, r, "update-index", "--assume-unchanged", "--skip-worktree", "--", f)
				case 3:
					mustRun(t, r, "rm", "-q", "--cached", "--", f)
				}
			}
			if rng.IntN(2) == 0 {
				write(t, r, "new/file", "new\n")
				mustRun(t, r, "add", "-N", "new/file")
			}
			mustRun(t, r, "update-index", "--index-version", fmt.Sprint(2+rng.IntN(2)))
			scopes := [][]string{{"d"}, {"e/f"}, {"base", "z"}, {"new"}, {"d/sub/é"}}
			sameAsLsFiles(t, r, scopes[rng.IntN(len(scopes))], scopes[rng.IntN(len(scopes))])
		})
	}
}

// conflict leaves path unmerged: its three stages in the index.
func conflict(t *testing.T, r *Repo, path string) {
	t.Helper()
	mustRun(t, r, "checkout", "-q", "-b", "side")
	write(t, r, path, "side\n")
	commitAll(t, r, "side")
	mustRun(t, r, "checkout", "-q", "main")
	write(t, r, path, "main\n")
	commitAll(t, r, "main")
	if _, err := r.Run("merge", "-q", "side"); err == nil {
		t.Fatal("the merge did not conflict")
	}
}

// rounds is full, or short under go test -short (`just test`): the random
// differential tests run their whole count in the ci tier (`just ci`).
func rounds(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}
