package git

import (
	"crypto/sha1"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git/internal/gitfile"
)

// sameAsLsFiles checks that the index reader answers, and answers what
// `git ls-files -v` does, for each scope.
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
	}
}

// rewriteIndex changes the on-disk flags of the index entries named name
// (the 16-bit flags: or, and not) and writes the index back with a valid
// checksum: index states git's own commands never write but a session
// could.
func rewriteIndex(t *testing.T, r *Repo, name string, set, clear uint16) {
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
			binary.BigEndian.PutUint16(data[q:], flags|set&^clear)
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

// The index reader agrees with git ls-files -v on the marks, the scopes,
// long paths, links, submodules, intent-to-add entries, extended flags
// and unmerged entries, including marks only a hand-written index holds.
func TestHiddenInIndexIsLsFiles(t *testing.T) {
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

// Every index the reader does not know exactly is left to git, which
// still answers HiddenPaths.
func TestHiddenInIndexFallsBack(t *testing.T) {
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
			wa, ws, werr := r.hiddenByGit(nil)
			a, s, err := r.HiddenPaths()
			if !slices.Equal(a, wa) || !slices.Equal(s, ws) || (err == nil) != (werr == nil) {
				t.Errorf("HiddenPaths = %q %q %v; git: %q %q %v", a, s, err, wa, ws, werr)
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
