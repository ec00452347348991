package seal_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/seal"
)

// memStore is a Store in memory that counts what it was given.
type memStore struct {
	blobs map[string][]byte
	put   []string // the paths Put was given, in order
}

func (m *memStore) Put(paths []string) ([]string, error) {
	ids := make([]string, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		s := sha256.Sum256(data)
		ids[i] = hex.EncodeToString(s[:])
		m.blobs[ids[i]] = data
		m.put = append(m.put, filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p))
	}
	return ids, nil
}

func (m *memStore) Get(id string) ([]byte, bool, error) {
	data, ok := m.blobs[id]
	return data, ok, nil
}

// rewriteInPlace changes p's bytes keeping its size, inode and mtime: only
// the change time tells.
func rewriteInPlace(t *testing.T, p string) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("X"), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// An indexed seal copies each settled file once, then trusts its
// metadata: a later Take reads none of them, and Restore puts back from the
// copies what a session changed, deleted or replaced, even a rewrite that
// kept the size and the mtime.
func TestTakeIndexed(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "0001/agent.json"), "agent one")
	write(t, filepath.Join(root, "0001/tree.before.json"), "tree one")
	write(t, filepath.Join(root, "0001/gone.txt"), "gone")
	write(t, filepath.Join(root, "0002/begin.json"), "begin two")
	store := &memStore{blobs: map[string][]byte{}}
	later := func() time.Time { return time.Now().Add(time.Second) } // past the racy window
	ix := seal.Index{Rel: "seal-index", Store: store, Now: later,
		Settled: func(rel string) bool { return !strings.HasPrefix(rel, "0002/") }}

	if _, err := seal.TakeIndexed(root, nil, ix); err != nil {
		t.Fatal(err)
	}
	want := []string{"0001/agent.json", "0001/gone.txt", "0001/tree.before.json"}
	if !slices.Equal(store.put, want) {
		t.Fatalf("first Take copied %q, want the settled files %q", store.put, want)
	}
	index := read(t, filepath.Join(root, "seal-index"))
	if !strings.HasPrefix(index, "treeloop seal index v1\n") || strings.Count(index, "\n") != 4 || strings.Contains(index, "0002/") {
		t.Fatalf("index:\n%s", index)
	}

	store.put = nil
	s, err := seal.TakeIndexed(root, nil, ix)
	if err != nil {
		t.Fatal(err)
	}
	if len(store.put) != 0 {
		t.Fatalf("second Take copied %q again", store.put)
	}
	if notes, err := s.Restore(); err != nil || len(notes) != 0 {
		t.Fatalf("nothing changed: notes %q, err %v", notes, err)
	}

	rewriteInPlace(t, filepath.Join(root, "0001/agent.json"))
	os.Remove(filepath.Join(root, "0001/gone.txt"))
	os.Remove(filepath.Join(root, "0001/tree.before.json"))
	os.Mkdir(filepath.Join(root, "0001/tree.before.json"), 0o755)
	write(t, filepath.Join(root, "0001/new.txt"), "new")
	write(t, filepath.Join(root, "seal-index"), "treeloop seal index v1\n")
	notes, err := s.Restore()
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"0001/agent.json changed", "0001/gone.txt deleted", "0001/new.txt added", "0001/tree.before.json changed", "seal-index changed"}
	if !slices.Equal(notes, want) {
		t.Errorf("notes\n got %q\nwant %q", notes, want)
	}
	for p, data := range map[string]string{"0001/agent.json": "agent one", "0001/gone.txt": "gone", "0001/tree.before.json": "tree one", "seal-index": index} {
		if got := read(t, filepath.Join(root, p)); got != data {
			t.Errorf("%s = %q, want %q", p, got, data)
		}
	}
}

// A file changed within the racy window is read, not indexed; one whose
// copy is gone is named, not restored.
func TestTakeIndexedRacyAndLost(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "0001/agent.json"), "agent one")
	store := &memStore{blobs: map[string][]byte{}}
	ix := seal.Index{Rel: "seal-index", Store: store, Settled: func(string) bool { return true },
		Now: func() time.Time { return time.Now().Add(seal.RacyWindow / 2) }}
	s, err := seal.TakeIndexed(root, nil, ix)
	if err != nil {
		t.Fatal(err)
	}
	if len(store.put) != 0 {
		t.Fatalf("a file written just now was indexed: %q", store.put)
	}
	if _, err := os.Lstat(filepath.Join(root, "seal-index")); !os.IsNotExist(err) {
		t.Fatalf("an index with nothing in it was written: %v", err)
	}
	rewriteInPlace(t, filepath.Join(root, "0001/agent.json"))
	if notes, _ := s.Restore(); !slices.Equal(notes, []string{"0001/agent.json changed"}) || read(t, filepath.Join(root, "0001/agent.json")) != "agent one" {
		t.Fatalf("an unindexed file is sealed by its bytes: notes %q", notes)
	}

	// Indexed at the next Take, trusted by its metadata from the one after.
	ix.Now = func() time.Time { return time.Now().Add(time.Second) }
	for range 2 {
		if s, err = seal.TakeIndexed(root, nil, ix); err != nil {
			t.Fatal(err)
		}
	}
	clear(store.blobs)
	rewriteInPlace(t, filepath.Join(root, "0001/agent.json"))
	notes, err := s.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "0001/agent.json changed (its copy ") || !strings.HasSuffix(notes[0], " is gone; set aside as agent.json.forged: not restored)") || seal.Restored(notes[0]) {
		t.Fatalf("notes %q", notes)
	}
	if _, err := os.Lstat(filepath.Join(root, "0001/agent.json")); !os.IsNotExist(err) {
		t.Errorf("the forged file is still where the runner's was: %v", err)
	}
	if got := read(t, filepath.Join(root, "0001/agent.json.forged")); got != "Xgent one" {
		t.Errorf("agent.json.forged = %q, want the forged bytes", got)
	}
}

type failingStore struct{ memStore }

func (failingStore) Put([]string) ([]string, error) { return nil, os.ErrPermission }

// A store that cannot take the copies (a full disk) costs only the index:
// the files are sealed by their bytes and put back from them.
func TestTakeIndexedStoreFails(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "0001/agent.json"), "agent one")
	ix := seal.Index{Rel: "seal-index", Store: &failingStore{}, Settled: func(string) bool { return true },
		Now: func() time.Time { return time.Now().Add(time.Second) }}
	s, err := seal.TakeIndexed(root, nil, ix)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, "seal-index")); !os.IsNotExist(err) {
		t.Fatalf("an index was written without copies: %v", err)
	}
	rewriteInPlace(t, filepath.Join(root, "0001/agent.json"))
	if notes, err := s.Restore(); err != nil || !slices.Equal(notes, []string{"0001/agent.json changed"}) || read(t, filepath.Join(root, "0001/agent.json")) != "agent one" {
		t.Fatalf("notes %q, err %v", notes, err)
	}
}
