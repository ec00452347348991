package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestProtectedBy(t *testing.T) {
	entries := []string{"justfile", "append-only:tests", "append-only:*_test.go", "tests/golden"}
	for _, c := range []struct {
		path       string
		ok, append bool
	}{
		{".runner/state/config.toml", true, false},
		{"justfile", true, false},
		{"tests/a_test.sh", true, true},
		{"tests/sub/b.txt", true, true},
		{"tests/golden/x.txt", true, false}, // a plain entry wins
		{"main_test.go", true, true},
		{"lib/main_test.go", false, false}, // * does not cross /
		{"main.go", false, false},
	} {
		_, ao, ok := ProtectedBy(c.path, entries)
		if ok != c.ok || ao != c.append {
			t.Errorf("ProtectedBy(%q) = append-only %v, protected %v; want %v, %v", c.path, ao, ok, c.append, c.ok)
		}
	}
}

// TestScope: every path ProtectedBy protects lies at or under one of
// Scope's paths; a glob without a literal leading directory (or not a
// clean relative path) widens the scope to the whole work tree (nil).
func TestScope(t *testing.T) {
	under := func(p string, scope []string) bool {
		for _, s := range scope {
			if p == s || strings.HasPrefix(p, s+"/") {
				return true
			}
		}
		return false
	}
	paths := []string{
		".runner/state/config.toml", ".runner/state/run_state.json", ".runner/GOAL.md", ".runner/.gitignore",
		".runner/state/tree.json", "justfile", "justfile/x", "docs/spec1/a.md", "docs/spec2/b/c.md", "docs/x",
		"tests/a", "tests/golden/x", "a*b/c", "a*b/d", "lib/x_test.go", "main.go", "deep/er/file",
		".gitattributes", "deep/.gitattributes", "tests/.gitattributes", "docs/spec1/.gitattributes", "src/.gitattributes",
	}
	for _, c := range []struct {
		entries []string
		want    []string // beyond RunnerOwned; nil: the whole tree
	}{
		{[]string{"justfile", "append-only:tests", "tests/golden"}, []string{"justfile", "tests", "tests/golden", ".runner/state/.gitattributes", ".runner/.gitattributes", ".gitattributes"}},
		{[]string{"docs/spec[12]/*.md", "deep/er/file"}, []string{"docs", "deep/er/file", ".runner/state/.gitattributes", ".runner/.gitattributes", ".gitattributes", "deep/er/.gitattributes", "deep/.gitattributes"}},
		{[]string{`a\*b/c`}, nil},
		{[]string{"justfile", "*_test.go"}, nil},
		{[]string{"append-only:?ests"}, nil},
		{[]string{"./justfile"}, nil},
		{[]string{"docs/"}, nil},
		{[]string{"../x"}, nil},
		{[]string{"/etc"}, nil},
	} {
		scope := Scope(c.entries)
		if c.want == nil {
			if scope != nil {
				t.Errorf("Scope(%q) = %q, want the whole tree", c.entries, scope)
			}
			continue
		}
		if want := append(slices.Clone(RunnerOwned), c.want...); !slices.Equal(scope, want) {
			t.Errorf("Scope(%q) = %q, want %q", c.entries, scope, want)
		}
		for _, p := range paths {
			if _, _, ok := ProtectedBy(p, c.entries); ok && !under(p, scope) {
				t.Errorf("Scope(%q) = %q leaves out %s, which ProtectedBy protects", c.entries, scope, p)
			}
		}
	}
}
