package git

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRestoreAttributesListed: the tracked attributes files the work tree
// changed are what ChangedAttributes lists (not a tracked file of another
// name, not an untracked one), and RestoreAttributesListed puts back each
// tracked one from the base, removes an untracked or ignored one and
// leaves a directory git ignores whole, given the listings.
func TestRestoreAttributesListed(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a/.gitattributes", "*.txt text\n")
	write(t, r, ".gitmodules", "")
	write(t, r, "a/f.txt", "f\n")
	write(t, r, ".gitignore", "out/\n*.log\n")
	base := commitAll(t, r, "base")
	write(t, r, "a/.gitattributes", "* ident\n")
	write(t, r, "a/f.txt", "changed\n")
	write(t, r, "b/.gitattributes", "* ident\n")
	write(t, r, "out/.gitattributes", "* ident\n")
	if err := os.Remove(filepath.Join(r.Root(), ".gitmodules")); err != nil {
		t.Fatal(err)
	}
	tracked, err := r.ChangedAttributes()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".gitmodules", "a/.gitattributes"}; !slices.Equal(tracked, want) {
		t.Fatalf("ChangedAttributes = %q, want %q", tracked, want)
	}
	back, err := r.RestoreAttributesListed(base, tracked, []string{"b/.gitattributes"}, []string{"out/"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".gitmodules", "a/.gitattributes", "b/.gitattributes"}; !slices.Equal(back, want) {
		t.Fatalf("RestoreAttributesListed = %q, want %q", back, want)
	}
	for name, want := range map[string]string{"a/.gitattributes": "*.txt text\n", ".gitmodules": "", "a/f.txt": "changed\n", "out/.gitattributes": "* ident\n"} {
		if got, err := os.ReadFile(filepath.Join(r.Root(), name)); err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want %q", name, got, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(r.Root(), "b", ".gitattributes")); !os.IsNotExist(err) {
		t.Errorf("b/.gitattributes is still there (%v)", err)
	}
	if again, err := r.ChangedAttributes(); err != nil || len(again) != 0 {
		t.Errorf("ChangedAttributes after = %q (%v), want none", again, err)
	}
}
