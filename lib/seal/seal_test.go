package seal_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/seal"
)

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Everything changed under a sealed directory is put back and named; the
// skipped paths are left alone.
func TestRestore(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "0001/begin.json"), "begin")
	write(t, filepath.Join(root, "0001/tree.before.json"), "tree")
	write(t, filepath.Join(root, "0001/gone.txt"), "gone")
	write(t, filepath.Join(root, "0002/agent.json"), "agent")
	write(t, filepath.Join(root, "0002/output.json"), "old output")
	if err := os.Symlink("begin.json", filepath.Join(root, "0001/link")); err != nil {
		t.Fatal(err)
	}
	s, err := seal.Take(root, func(rel string) bool { return rel == "0002/output.json" })
	if err != nil {
		t.Fatal(err)
	}
	if notes, err := s.Restore(); err != nil || len(notes) != 0 {
		t.Fatalf("nothing changed: notes %q, err %v", notes, err)
	}

	write(t, filepath.Join(root, "0001/begin.json"), "forged")
	os.Remove(filepath.Join(root, "0001/gone.txt"))
	os.RemoveAll(filepath.Join(root, "0002"))
	write(t, filepath.Join(root, "0002"), "a file where a directory was")
	write(t, filepath.Join(root, "0001/new.txt"), "new")
	os.Remove(filepath.Join(root, "0001/link"))
	os.Symlink("/etc/hostname", filepath.Join(root, "0001/link"))
	write(t, filepath.Join(root, "0001/tree.before.json"), "tree") // same bytes again: unchanged

	notes, err := s.Restore()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"0001/begin.json changed", "0001/gone.txt deleted", "0001/link changed", "0001/new.txt added", "0002/ deleted", "0002/agent.json deleted"}
	if !slices.Equal(notes, want) {
		t.Errorf("notes\n got %q\nwant %q", notes, want)
	}
	for p, data := range map[string]string{"0001/begin.json": "begin", "0001/gone.txt": "gone", "0002/agent.json": "agent", "0001/tree.before.json": "tree"} {
		if got := read(t, filepath.Join(root, p)); got != data {
			t.Errorf("%s = %q, want %q", p, got, data)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "0001/new.txt")); !os.IsNotExist(err) {
		t.Errorf("0001/new.txt not removed: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(root, "0001/link")); err != nil || target != "begin.json" {
		t.Errorf("link = %q, %v; want begin.json", target, err)
	}
	// The skipped file is the caller's: it was deleted with 0002 and is
	// not brought back.
	if _, err := os.Lstat(filepath.Join(root, "0002/output.json")); !os.IsNotExist(err) {
		t.Errorf("0002/output.json: %v; a skipped path is neither sealed nor restored", err)
	}
}

// TestRestoreAtMaxKept: a file of exactly MaxKept bytes is kept and put
// back; one byte more is only compared, and its change named as not
// restored, even when it was rewritten in place at the same size.
func TestRestoreAtMaxKept(t *testing.T) {
	root := t.TempDir()
	at, past := strings.Repeat("a", seal.MaxKept), strings.Repeat("b", seal.MaxKept+1)
	write(t, filepath.Join(root, "0001/at.log"), at)
	write(t, filepath.Join(root, "0001/past.log"), past)
	write(t, filepath.Join(root, "0001/same.log"), past)
	s, err := seal.Take(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "0001/at.log"), "forged")
	write(t, filepath.Join(root, "0001/past.log"), "forged")
	sameSize := past[:seal.MaxKept] + "c"
	write(t, filepath.Join(root, "0001/same.log"), sameSize)
	notes, err := s.Restore()
	if err != nil {
		t.Fatal(err)
	}
	tooLarge := seal.NotRestored("it was too large to keep")
	if want := []string{"0001/at.log changed", "0001/past.log changed" + tooLarge, "0001/same.log changed" + tooLarge}; !slices.Equal(notes, want) {
		t.Errorf("notes\n got %q\nwant %q", notes, want)
	}
	if got := read(t, filepath.Join(root, "0001/at.log")); got != at {
		t.Errorf("at.log not put back (%d bytes)", len(got))
	}
	if got := read(t, filepath.Join(root, "0001/past.log")); got != "forged" {
		t.Errorf("past.log = %d bytes, want the session's", len(got))
	}
	if got := read(t, filepath.Join(root, "0001/same.log")); got != sameSize {
		t.Errorf("same.log is not the session's")
	}
}
