package fsutil

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMapFile(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), MapThreshold/16+100)
	small := []byte(`{"id":"root"}`)
	for name, data := range map[string][]byte{"big.json": big, "small.json": small} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string][]byte{"big.json": big, "small.json": small} {
		got, release, err := MapFile(filepath.Join(dir, name), dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes read, want %d equal bytes", name, len(got), len(want))
		}
		release()
	}

	if _, release, err := MapFile(filepath.Join(dir, "big.json"), dir, int64(len(big)-1)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("over the limit: err = %v", err)
	} else {
		release()
	}
	if _, _, err := MapFile(dir, "", 0); err == nil {
		t.Error("a directory was read")
	}
	if _, _, err := MapFile(filepath.Join(dir, "missing.json"), dir, 0); !os.IsNotExist(err) {
		t.Errorf("missing file: err = %v", err)
	}
	outside := filepath.Join(t.TempDir(), "tree.json")
	if err := os.WriteFile(outside, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MapFile(filepath.Join(dir, "link.json"), dir, 0); err == nil {
		t.Error("a symlink leaving the root was followed")
	}
}

var sink byte

// A mapped file truncated under the reader faults on access; MapFile has
// turned that fault into a panic carrying the address.
func TestMapFileTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.json")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 4*MapThreshold), 0o644); err != nil {
		t.Fatal(err)
	}
	data, release, err := MapFile(path, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	defer func() {
		r := recover()
		if _, ok := r.(interface{ Addr() uintptr }); !ok {
			t.Fatalf("recovered %v, want a fault with an address", r)
		}
	}()
	sink = data[len(data)-1]
	t.Fatal("reading a truncated mapping did not fault")
}
