package pathglob

import (
	"path"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		glob, p string
		want    bool
	}{
		{"**/conftest.py", "conftest.py", true},
		{"**/conftest.py", "tests/conftest.py", true},
		{"**/conftest.py", "a/b/c/conftest.py", true},
		{"**/conftest.py", "a/b/c/conftest.pyc", false},
		{"**/conftest.py", "a/conftest.py/x", false},
		{"tests/**", "tests", true},
		{"tests/**", "tests/a/b", true},
		{"tests/**", "test/a", false},
		{"src/**/*.ts", "src/a.ts", true},
		{"src/**/*.ts", "src/x/y/a.ts", true},
		{"src/**/*.ts", "lib/x/a.ts", false},
		{"a/**/**/b", "a/b", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/**/b/**/c", "a/x/b", false},
		{"**", "anything/at/all", true},
		{"*_test.go", "lib/x_test.go", false}, // "*" does not cross "/"
		{"a**b", "axxb", true},                // "**" inside an element is "*"
		{"a**b", "ax/xb", false},
		{"[", "[", false}, // malformed: matches nothing
	} {
		if got := Match(c.glob, c.p); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.glob, c.p, got, c.want)
		}
	}
}

// TestMatchAsPathMatch: a glob with no "**" element means what
// path.Match gives it, so every protected_paths entry written before
// keeps its meaning.
func TestMatchAsPathMatch(t *testing.T) {
	globs := []string{"justfile", "ci/*.sh", "*_test.go", "docs/spec[12]/*.md", "a?c", `a\*b/c`, "tests", "x/[!a]y"}
	paths := []string{"justfile", "ci/a.sh", "ci/sub/a.sh", "x_test.go", "lib/x_test.go", "docs/spec1/a.md", "docs/spec3/a.md", "abc", "a*b/c", "axb/c", "tests", "tests/a", "x/by", "x/ay"}
	for _, g := range globs {
		for _, p := range paths {
			want, _ := path.Match(g, p)
			if got := Match(g, p); got != want {
				t.Errorf("Match(%q, %q) = %v, path.Match says %v", g, p, got, want)
			}
		}
	}
}

func TestValidate(t *testing.T) {
	for glob, ok := range map[string]bool{"**/conftest.py": true, "a/[b": false, "ci/*.sh": true, "x/\\": false} {
		if err := Validate(glob); (err == nil) != ok {
			t.Errorf("Validate(%q) = %v, want ok %v", glob, err, ok)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("a/**/b", "a/x/y/b")
	f.Add("ci/*.sh", "ci/a.sh")
	f.Fuzz(func(t *testing.T, glob, p string) {
		got := Match(glob, p)
		if !strings.Contains(glob, Any) {
			if want, _ := path.Match(glob, p); got != want {
				t.Errorf("Match(%q, %q) = %v, path.Match says %v", glob, p, got, want)
			}
		}
		if Match("**/"+glob, "x/y/"+p) != Match(glob, p) && !strings.Contains(p+glob, "/") && Validate(glob) == nil {
			t.Errorf("Match(**/%q, x/y/%q) differs from Match(%q, %q)", glob, p, glob, p)
		}
	})
}
