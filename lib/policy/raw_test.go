package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/git"
)

// TestEnforceRawBytes: a protected file rewritten into other bytes whose
// clean form git sees as unchanged (an attributes file the session wrote
// turns the CRLF it wrote back into the LF committed) is caught by its raw
// bytes and put back byte for byte; the new attributes file governs a
// protected path, so it is removed; an unprotected file is left alone.
func TestEnforceRawBytes(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "runner/r")
	write := func(p, data string) { t.Helper(); writeFile(t, filepath.Join(dir, p), data) }
	write("justfile", "ci:\n    @sh ci/check.sh\n")
	write("ci/check.sh", "exit 1\n")
	write("src/a.txt", "a\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	base := gitIn(t, dir, "rev-parse", "HEAD")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	protected := []string{"justfile", "ci/*.sh"}
	held, err := Hold(repo, protected)
	if err != nil {
		t.Fatal(err)
	}
	if !held.Has("justfile") || !held.Has("ci/check.sh") || held.Has("src/a.txt") {
		t.Fatalf("held: %v", held.files)
	}
	write(".gitattributes", "justfile text eol=crlf\n")
	write("justfile", "ci:\r\n    @sh ci/check.sh\r\n")
	gitIn(t, dir, "add", "--renormalize", "justfile") // git's index now agrees with the CRLF file
	if out := gitIn(t, dir, "status", "--porcelain", "--", "justfile"); out != "" {
		t.Fatalf("git status shows the justfile (the test's premise fails): %q", out)
	}
	write("src/a.txt", "changed\n")
	os.Chmod(filepath.Join(dir, "ci/check.sh"), 0o755)
	reasons, err := Enforce(repo, "the agent", "runner/r", base, protected, time.Time{}, held)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"the agent changed the protected path ci/check.sh (protected_paths ci/*.sh); the runner restored it",
		"the agent changed the protected path justfile (protected_paths justfile); the runner restored it",
		"the agent changed the protected path .gitattributes (git attributes of protected paths); the runner restored it",
	}
	if !slices.Equal(reasons, want) {
		t.Errorf("reasons:\n%s", strings.Join(reasons, "\n"))
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "justfile")); string(data) != "ci:\n    @sh ci/check.sh\n" {
		t.Errorf("justfile = %q", data)
	}
	if st, _ := os.Stat(filepath.Join(dir, "ci/check.sh")); st.Mode().Perm() != 0o644 {
		t.Errorf("ci/check.sh mode %v", st.Mode())
	}
	if _, err := os.Lstat(filepath.Join(dir, ".gitattributes")); !os.IsNotExist(err) {
		t.Errorf(".gitattributes stays: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "src/a.txt")); string(data) != "changed\n" {
		t.Errorf("src/a.txt = %q", data)
	}
}

// TestAttributesProtected: an attributes file governs the protected paths
// below its directory.
func TestAttributesProtected(t *testing.T) {
	for _, c := range []struct {
		p       string
		entries []string
		want    bool
	}{
		{".gitattributes", nil, true}, // the root's governs the runner's files
		{"ci/.gitattributes", []string{"ci/*.sh"}, true},
		{"ci/sub/.gitattributes", []string{"ci/*.sh"}, true},
		{"src/.gitattributes", []string{"ci/*.sh"}, false},
		{".runner/state/.gitattributes", nil, true},
		{"src/.gitattributes", []string{"*_test.go"}, true},
		{"src/gitattributes", []string{"*_test.go"}, false},
	} {
		if got := AttributesProtected(c.p, c.entries); got != c.want {
			t.Errorf("AttributesProtected(%q, %q) = %v", c.p, c.entries, got)
		}
	}
}
