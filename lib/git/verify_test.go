package git

import (
	"bytes"
	"compress/zlib"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestShowFileVerified: a file read at a commit is the one the commit id
// names. A replace ref is not followed; a loose object rewritten behind
// git's back (same name, other bytes), the blob's or a tree's on the way,
// is an *ErrTampered, never its bytes.
func TestShowFileVerified(t *testing.T) {
	bothWays(t, showFileVerified)
}

func showFileVerified(t *testing.T) {
	r := newRepo(t)
	write(t, r, ".runner/state/config.toml", "[guard]\ncommand = [\"just\", \"ci\"]\n")
	write(t, r, "other.txt", "other\n")
	base := commitAll(t, r, "base")
	data, ok, err := r.ShowFile(base, ".runner/state/config.toml")
	if err != nil || !ok || !strings.Contains(string(data), "just") {
		t.Fatalf("ShowFile = %q, %v, %v", data, ok, err)
	}
	blob := strings.TrimSpace(string(mustRun(t, r, "rev-parse", base+":.runner/state/config.toml")))
	fake := strings.TrimSpace(string(mustRun(t, r, "rev-parse", base+":other.txt")))
	mustRun(t, r, "replace", blob, fake)
	if data, _, err := r.ShowFile(base, ".runner/state/config.toml"); err != nil || !strings.Contains(string(data), "just") {
		t.Errorf("with a replace ref: %q, %v", data, err)
	}
	mustRun(t, r, "replace", "-d", blob)

	for _, id := range []string{blob, strings.TrimSpace(string(mustRun(t, r, "rev-parse", base+":.runner/state")))} {
		obj := filepath.Join(r.Root(), ".git", "objects", id[:2], id[2:])
		orig, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		forged := "[guard]\ncommand = [\"true\"]\n"
		w.Write([]byte("blob " + strconv.Itoa(len(forged)) + "\x00" + forged))
		w.Close()
		os.Chmod(obj, 0o644)
		if err := os.WriteFile(obj, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		data, _, err := r.ShowFile(base, ".runner/state/config.toml")
		var tampered *ErrTampered
		if !errors.As(err, &tampered) || tampered.ID != id {
			t.Errorf("object %s forged: ShowFile = %q, %v", id, data, err)
		}
		if err := os.WriteFile(obj, orig, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if data, ok, err := r.ShowFile(base, ".runner/state/nope"); err != nil || ok || data != nil {
		t.Errorf("missing file: %q, %v, %v", data, ok, err)
	}
	if _, _, err := r.ShowFile(base, ".runner"); err == nil || !strings.Contains(err.Error(), "not a file") {
		t.Errorf("a directory: %v", err)
	}
}

// TestObjectID is git hash-object.
func TestObjectID(t *testing.T) {
	r := newRepo(t)
	write(t, r, "f", "some bytes\n")
	want := strings.TrimSpace(string(mustRun(t, r, "hash-object", "f")))
	if got := ObjectID("blob", []byte("some bytes\n"), 40); got != want {
		t.Errorf("ObjectID = %s, git says %s", got, want)
	}
}
