package seal

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// relTo agrees with filepath.Rel on the paths filepath.WalkDir gives
// (root itself, then root joined with each name).
func TestRelTo(t *testing.T) {
	for _, root := range []string{"/a/b", "/a/b/", ".", "a", "/", "a/../b"} {
		for _, name := range []string{"", "x", "x/y", "x y/z", ".hidden"} {
			p := root
			if name != "" {
				p = filepath.Join(root, name)
			}
			want, _ := filepath.Rel(root, p)
			if got := relTo(root, p); got != want {
				t.Errorf("relTo(%q, %q) = %q, want %q", root, p, got, want)
			}
		}
	}
}

// walkDir visits what filepath.WalkDir visits, in the same order, with
// the same paths, from any root, skipping as told.
func TestWalkDirIsFilepathWalkDir(t *testing.T) {
	base := t.TempDir()
	for _, f := range []string{"a/x", "a/y/z", "b", "c/skip/w", "c/v", "d e/f"} {
		p := filepath.Join(base, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(base)
	for _, root := range []string{base, base + "/", base + "/a/..", ".", "a", "./c", "missing", base + "/missing"} {
		visits := func(walk func(string, fs.WalkDirFunc) error) []string {
			var seen []string
			err := walk(root, func(p string, d fs.DirEntry, err error) error {
				seen = append(seen, fmt.Sprintf("%s %v %v", p, d != nil && d.IsDir(), err))
				if strings.HasSuffix(p, "skip") || filepath.Base(p) == "x" { // a directory, a file (the rest of a/)
					return filepath.SkipDir
				}
				return err
			})
			return append(seen, fmt.Sprint(err))
		}
		if got, want := visits(walkDir), visits(filepath.WalkDir); !slices.Equal(got, want) {
			t.Errorf("root %q: walkDir visits %q, filepath.WalkDir %q", root, got, want)
		}
		if plainRoot(root) && under(root, "a/y") != filepath.Join(root, "a/y") {
			t.Errorf("under(%q, a/y) = %q", root, under(root, "a/y"))
		}
	}
}
