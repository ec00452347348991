package git

import (
	"bytes"
	"compress/zlib"
	"os"
	"path/filepath"
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
