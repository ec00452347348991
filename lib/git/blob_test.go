package git

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Blobs written byte for byte come back checked against their ids: an
// object file rewritten in place with other bytes, or removed, is no copy.
func TestBlobs(t *testing.T) {
	r := newRepo(t)
	write(t, r, ".gitattributes", "*.txt text eol=crlf\n") // no filter may apply
	write(t, r, "a.txt", "one\n")
	write(t, r, "b.bin", "two\x00")
	ids, err := r.WriteBlobs([]string{filepath.Join(r.Root(), "a.txt"), "b.bin"})
	if err != nil || len(ids) != 2 {
		t.Fatalf("WriteBlobs: %q, %v", ids, err)
	}
	for i, want := range []string{"one\n", "two\x00"} {
		data, ok, err := r.Blob(ids[i])
		if err != nil || !ok || string(data) != want {
			t.Fatalf("Blob(%s) = %q, %v, %v; want %q", ids[i], data, ok, err, want)
		}
	}

	obj := filepath.Join(r.Root(), ".git", "objects", ids[0][:2], ids[0][2:])
	var forged bytes.Buffer
	z := zlib.NewWriter(&forged)
	z.Write([]byte("blob 4\x00two\n"))
	z.Close()
	os.Chmod(obj, 0o644)
	if err := os.WriteFile(obj, forged.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, ok, err := r.Blob(ids[0]); err != nil || ok {
		t.Fatalf("a rewritten object: Blob = %q, %v, %v; want not ok", data, ok, err)
	}
	os.Remove(obj)
	if _, ok, err := r.Blob(ids[0]); err != nil || ok {
		t.Fatalf("a removed object: ok %v, err %v; want not ok", ok, err)
	}
	if _, _, err := r.Blob("nope"); err == nil {
		t.Fatal("Blob of a malformed id: no error")
	}
}

// TestWriteBlob: the bytes go in unfiltered, and the id is git's own.
func TestWriteBlob(t *testing.T) {
	r := newRepo(t)
	write(t, r, ".gitattributes", "* text eol=crlf\n") // no filter may apply
	id, err := r.WriteBlob([]byte("one\ntwo\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := ObjectID("blob", []byte("one\ntwo\n"), len(id)); id != want {
		t.Fatalf("WriteBlob = %s, want %s", id, want)
	}
	if data, ok, err := r.Blob(id); err != nil || !ok || string(data) != "one\ntwo\n" {
		t.Fatalf("Blob(%s) = %q, %v, %v", id, data, ok, err)
	}
	if again, err := r.WriteBlob([]byte("one\ntwo\n")); err != nil || again != id {
		t.Fatalf("WriteBlob again = %s, %v; want %s", again, err, id)
	}
}

// A blob there already as a loose object is named without git, and its
// time renewed as git's freshen renews it; any other goes to git, which
// stores it.
func TestWriteBlobLoose(t *testing.T) {
	r := newRepo(t)
	write(t, r, "tree.json", "{}\n")
	commitAll(t, r, "tree")
	obj := filepath.Join(r.Root(), ".git", "objects")
	id := ObjectID("blob", []byte("{}\n"), 40)
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(obj, id[:2], id[2:]), old, old); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no git to run
	got, err := r.WriteBlob([]byte("{}\n"))
	if err != nil || got != id {
		t.Fatalf("WriteBlob of a loose blob without git = %s, %v; want %s", got, err, id)
	}
	if st, err := os.Stat(filepath.Join(obj, id[:2], id[2:])); err != nil || !st.ModTime().After(old.Add(time.Hour)) {
		t.Fatalf("the loose object's time was not renewed: %v, %v", st.ModTime(), err)
	}
	if got, err := r.WriteBlob([]byte("new\n")); err == nil {
		t.Fatalf("WriteBlob of a new blob without git = %s; want git's error", got)
	}
}

// TestDifferentialWriteBlobs holds WriteBlobs without git (in a step's
// hermetic git: loose objects written here) to git hash-object on random
// files: empty, small, larger than a zlib window, binary, reached through
// a symbolic link, relative to the root, one already stored with its
// time renewed: the same ids, objects that git cat-file reads back byte
// for byte and git fsck --strict accepts, mode 0444, no temporary file
// left; all with no git on PATH.
func TestDifferentialWriteBlobs(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a", "a\n")
	commitAll(t, r, "first")
	t.Setenv(HermeticVar, "1")
	rng := rand.New(rand.NewPCG(7, 8))
	var paths, want []string
	var contents [][]byte
	for i, size := range []int{0, 1, 100, 4096, 70000, 300000, rng.IntN(1 << 16)} {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.IntN(256))
			if i%2 == 0 {
				data[j] = "ab\n"[rng.IntN(3)] // compressible
			}
		}
		name := fmt.Sprintf("f%d", i)
		if err := os.WriteFile(filepath.Join(r.Root(), name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(r.Root(), name)
		if i == 2 {
			p = name // relative to the root
		}
		paths, contents = append(paths, p), append(contents, data)
	}
	if err := os.Symlink("f4", filepath.Join(r.Root(), "link")); err != nil {
		t.Fatal(err)
	}
	paths, contents = append(paths, filepath.Join(r.Root(), "link")), append(contents, contents[4])
	paths, contents = append(paths, filepath.Join(r.Root(), "a")), append(contents, []byte("a\n")) // stored already
	for _, p := range paths {
		out, err := run(r.Root(), nil, "hash-object", "--no-filters", p)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, strings.TrimSpace(string(out)))
	}
	objects := filepath.Join(r.Root(), ".git", "objects")
	stored := filepath.Join(objects, want[len(want)-1][:2], want[len(want)-1][2:])
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stored, old, old); err != nil {
		t.Fatal(err)
	}
	gitPath := os.Getenv("PATH")
	t.Setenv("PATH", t.TempDir()) // no git to run
	got, err := r.WriteBlobs(paths)
	t.Setenv("PATH", gitPath)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("WriteBlobs = %q\ngit hash-object gives %q", got, want)
	}
	for i, id := range got {
		out, err := run(r.Root(), nil, "cat-file", "blob", id)
		if err != nil || !bytes.Equal(out, contents[i]) {
			t.Fatalf("git cat-file blob %s: %d bytes, %v; want the %d bytes of %s", id, len(out), err, len(contents[i]), paths[i])
		}
		st, err := os.Stat(filepath.Join(objects, id[:2], id[2:]))
		if err != nil || st.Mode().Perm() != 0o444 {
			t.Fatalf("object %s: %v, %v; want mode 0444", id, st.Mode(), err)
		}
	}
	if st, err := os.Stat(stored); err != nil || !st.ModTime().After(old.Add(time.Hour)) {
		t.Fatalf("the object stored already: time %v, %v; want renewed", st.ModTime(), err)
	}
	if out, err := run(r.Root(), nil, "fsck", "--strict"); err != nil {
		t.Fatalf("git fsck --strict: %v\n%s", err, out)
	}
	if tmps, _ := filepath.Glob(filepath.Join(objects, "*", "tmp_obj_*")); len(tmps) > 0 {
		t.Fatalf("temporary files left: %q", tmps)
	}
}

// TestLooseWritable: loose objects are written here only where git would
// write them the same way; any doubt (outside a step's hermetic git, a
// setting for shared permissions, syncs or an extension, in the snapshot
// or the local config, an include, no loose HEAD, a SHA-256 repository's
// extension) leaves them to git, which then stores them (a SHA-256 id).
func TestLooseWritable(t *testing.T) {
	r := newRepo(t)
	if _, _, ok := r.looseWritable(); ok {
		t.Fatal("no HEAD yet: writable")
	}
	write(t, r, "a", "a\n")
	commitAll(t, r, "first")
	if _, _, ok := r.looseWritable(); ok {
		t.Fatal("outside hermetic git: writable")
	}
	t.Setenv(HermeticVar, "1")
	if _, _, ok := r.looseWritable(); !ok {
		t.Fatal("a plain repository in hermetic git: not writable")
	}
	for _, key := range []string{"core.sharedRepository", "core.fsyncObjectFiles", "core.fsync", "extensions.compatObjectFormat", "include.path"} {
		t.Setenv("GIT_CONFIG_KEY_3", key)
		if _, _, ok := r.looseWritable(); ok {
			t.Fatalf("the snapshot sets %s: writable", key)
		}
	}
	os.Unsetenv("GIT_CONFIG_KEY_3")
	cfg := filepath.Join(r.Root(), ".git", "config")
	plain, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{"[core]\n\tSharedRepository = group\n", "[core]\n\tfsync = loose-object\n", "[includeIf \"gitdir:/\"]\n\tpath = x\n"} {
		if err := os.WriteFile(cfg, append(slices.Clone(plain), extra...), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := r.looseWritable(); ok {
			t.Fatalf("the local config has %q: writable", extra)
		}
	}
	if err := os.WriteFile(cfg, plain, 0o644); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	if _, err := run(dir, nil, "init", "-q", "--object-format=sha256", "--initial-branch=main"); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, s, "a", "a\n")
	commitAll(t, s, "first")
	if _, _, ok := s.looseWritable(); ok {
		t.Fatal("a SHA-256 repository (extensions.objectFormat): writable")
	}
	ids, err := s.WriteBlobs([]string{"a"})
	if err != nil || len(ids) != 1 || ids[0] != ObjectID("blob", []byte("a\n"), 64) {
		t.Fatalf("WriteBlobs in a SHA-256 repository = %q, %v", ids, err)
	}
}
