package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomicAfter: the file appears only after first returned, and
// not at all when first fails; no temporary file is left either way.
func TestWriteAtomicAfter(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "record.json")
	state := filepath.Join(dir, "state.json")

	firstErr, err := WriteAtomicAfter(path, []byte("record\n"), 0o644, func() error {
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the record exists before first returned (%v)", err)
		}
		return WriteAtomic(state, []byte("state\n"), 0o644)
	})
	if firstErr != nil || err != nil {
		t.Fatal(firstErr, err)
	}
	for name, want := range map[string]string{path: "record\n", state: "state\n"} {
		if data, err := os.ReadFile(name); err != nil || string(data) != want {
			t.Fatalf("%s: %q, %v; want %q", name, data, err, want)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}

	// first fails: the record is not written.
	os.Remove(path)
	boom := errors.New("boom")
	firstErr, err = WriteAtomicAfter(path, []byte("record\n"), 0o644, func() error { return boom })
	if !errors.Is(firstErr, boom) || err != nil {
		t.Fatalf("got %v, %v; want boom, nil", firstErr, err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the record was written after first failed (%v)", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "state.json" {
		t.Fatalf("left in the directory: %v", entries)
	}

	// The record cannot be written: its error, first's nil.
	firstErr, err = WriteAtomicAfter(filepath.Join(dir, "missing", "r.json"), []byte("x"), 0o644, func() error { return nil })
	if firstErr != nil || err == nil {
		t.Fatalf("got %v, %v; want nil, an error", firstErr, err)
	}
}
