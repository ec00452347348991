package policy

import "testing"

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
