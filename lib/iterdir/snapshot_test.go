package iterdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
)

// TestSnapshotTree: the tree an iteration began with comes from the blob
// begin.json names, through the work tree while tree.json still hashes to
// it and from git's object database once it changed, never from a
// tree.before.json beside it; a directory whose begin.json names no blob
// (written before tree_blob) is read from its tree.before.json.
func TestSnapshotTree(t *testing.T) {
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	repo, err := git.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	const before = "{\"id\": \"root\"}\n"
	id, err := repo.WriteBlob([]byte(before))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, layout.IterDir("run-1", 1))
	treePath := filepath.Join(root, layout.Tree)
	for _, p := range []string{dir, filepath.Dir(treePath)} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, data string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(b Begin) (string, string, error) {
		t.Helper()
		data, release, name, err := SnapshotTree(root, dir, b)
		defer release()
		return string(data), name, err
	}
	write(filepath.Join(dir, TreeBefore), "planted\n")

	write(treePath, before) // right after iter-log begin
	if got, name, err := read(Begin{TreeBlob: id}); err != nil || got != before || !strings.Contains(name, id[:12]) {
		t.Fatalf("work tree as begun: %q, %q, %v", got, name, err)
	}
	write(treePath, "{\"id\": \"edited\"}\n") // the agent's edits
	if got, _, err := read(Begin{TreeBlob: strings.ToUpper(id)}); err != nil || got != before {
		t.Fatalf("work tree edited: %q, %v; want the blob", got, err)
	}
	missing := git.ObjectID("blob", []byte("never written"), len(id))
	if _, _, err := read(Begin{TreeBlob: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("a missing blob: %v", err)
	}
	if got, name, err := read(Begin{}); err != nil || got != "planted\n" || name != TreeBefore {
		t.Fatalf("an older directory: %q, %q, %v", got, name, err)
	}
	os.Remove(filepath.Join(dir, TreeBefore))
	if _, _, err := read(Begin{}); err == nil || !strings.Contains(err.Error(), TreeBefore) {
		t.Fatalf("an older directory without its snapshot: %v", err)
	}
}
