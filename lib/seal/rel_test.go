package seal

import (
	"path/filepath"
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
