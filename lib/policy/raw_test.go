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

// TestHeldAtLimit: a protected file of exactly MaxHeld bytes is held by
// its bytes and put back as it was before the session (here an
// uncommitted change); one byte more, it is held by its digest and put
// back from base.
func TestHeldAtLimit(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "runner/r")
	write := func(p string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fill := func(n int, b byte) []byte { return []byte(strings.Repeat(string(b), n)) }
	write("data/limit.bin", fill(MaxHeld, 'a'))
	write("data/over.bin", fill(MaxHeld+1, 'a'))
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	base := gitIn(t, dir, "rev-parse", "HEAD")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Changed before the session, not committed.
	write("data/limit.bin", fill(MaxHeld, 'b'))
	write("data/over.bin", fill(MaxHeld+1, 'b'))
	protected := []string{"data/*.bin"}
	held, err := Hold(repo, protected)
	if err != nil {
		t.Fatal(err)
	}
	write("data/limit.bin", fill(MaxHeld, 'c'))
	write("data/over.bin", fill(MaxHeld+1, 'c'))
	if got := held.Changed(); !slices.Equal(got, []string{"data/limit.bin", "data/over.bin"}) {
		t.Fatalf("changed: %q", got)
	}
	reasons, err := Enforce(repo, "the agent", "runner/r", base, protected, time.Time{}, held)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{
		"the agent changed the protected path data/limit.bin (protected_paths data/*.bin); the runner restored it",
		"the agent changed the protected path data/over.bin (protected_paths data/*.bin); the runner restored it",
	}; !slices.Equal(reasons, want) {
		t.Errorf("reasons %q, want %q", reasons, want)
	}
	for p, want := range map[string]byte{"data/limit.bin": 'b', "data/over.bin": 'a'} {
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil || len(data) == 0 || data[0] != want || data[len(data)-1] != want {
			t.Errorf("%s: %d bytes starting %q, %v; want all %q", p, len(data), data[:min(1, len(data))], err, want)
		}
	}
}

// TestHeldKinds: Changed names exactly the held paths that differ (gone,
// a directory or a link where a file was, a link retargeted, the same
// size with other bytes), never an untouched one, and Enforce puts each
// back as it was, kind and target included.
func TestHeldKinds(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "runner/r")
	write := func(p, data string) { t.Helper(); writeFile(t, filepath.Join(dir, p), data) }
	link := func(target, p string) {
		t.Helper()
		os.Remove(filepath.Join(dir, p))
		if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"same", "gone", "dir", "link", "bytes"} {
		write("ci/"+p+".sh", "exit 0 # "+p+"\n")
	}
	link("same.sh", "ci/moved.sh")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	base := gitIn(t, dir, "rev-parse", "HEAD")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	protected := []string{"ci/*.sh"}
	held, err := Hold(repo, protected)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "ci/gone.sh")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "ci/dir.sh"))
	write("ci/dir.sh/inner", "x\n")
	link("/etc/passwd", "ci/link.sh")
	link("gone.sh", "ci/moved.sh")
	write("ci/bytes.sh", "exit 1 # bytes\n")
	want := []string{"ci/bytes.sh", "ci/dir.sh", "ci/gone.sh", "ci/link.sh", "ci/moved.sh"}
	if got := held.Changed(); !slices.Equal(got, want) {
		t.Fatalf("changed %q, want %q", got, want)
	}
	reasons, err := Enforce(repo, "the agent", "runner/r", base, protected, time.Time{}, held)
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != len(want) {
		t.Errorf("reasons: %q", reasons)
	}
	for _, p := range []string{"same", "gone", "dir", "link", "bytes"} {
		full := filepath.Join(dir, "ci", p+".sh")
		st, err := os.Lstat(full)
		data, _ := os.ReadFile(full)
		if err != nil || !st.Mode().IsRegular() || string(data) != "exit 0 # "+p+"\n" {
			t.Errorf("ci/%s.sh: %v %v %q", p, st, err, data)
		}
	}
	if target, err := os.Readlink(filepath.Join(dir, "ci/moved.sh")); err != nil || target != "same.sh" {
		t.Errorf("ci/moved.sh links to %q, %v", target, err)
	}
	if got := held.Changed(); len(got) != 0 {
		t.Errorf("changed after Enforce: %q", got)
	}
}

// TestHoldWhat: Hold keeps the bytes of the protected paths and of the
// small files holding protected keys, not a large file held for its keys
// (its keys are checked against base) nor an unprotected file.
func TestHoldWhat(t *testing.T) {
	dir, repo, _ := infraRepo(t)
	writeFile(t, filepath.Join(dir, "big/pyproject.toml"), pyproject+"# "+strings.Repeat("x", MaxHeld)+"\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "a large pyproject.toml")
	held, err := Hold(repo, testInfra)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		"conftest.py": true, "tests/deep/conftest.py": true, "pyproject.toml": true, "sub/pyproject.toml": true,
		"package.json": true, "setup.cfg": true, "big/pyproject.toml": false, "tests/test_a.py": false,
	} {
		if held.Has(p) != want {
			t.Errorf("held %s: %v, want %v", p, !want, want)
		}
	}
}

// TestPutOverDirectory: a held file the session replaced by a directory
// is put back from the bytes held before the session (an uncommitted
// change), not from base.
func TestPutOverDirectory(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "runner/r")
	writeFile(t, filepath.Join(dir, "ci/check.sh"), "exit 0\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	base := gitIn(t, dir, "rev-parse", "HEAD")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ci/check.sh"), "exit 0 # the user's\n")
	protected := []string{"ci/*.sh"}
	held, err := Hold(repo, protected)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "ci/check.sh")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "ci/check.sh/inner"), "x\n")
	reasons, err := Enforce(repo, "the agent", "runner/r", base, protected, time.Time{}, held)
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 1 || reasons[0] != "the agent changed the protected path ci/check.sh (protected_paths ci/*.sh); the runner restored it" {
		t.Errorf("reasons %q", reasons)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "ci/check.sh")); err != nil || string(data) != "exit 0 # the user's\n" {
		t.Errorf("ci/check.sh = %q, %v", data, err)
	}
}

// TestHoldDeleted: a tracked protected path already deleted before the
// session is not held (git restores it from base), and Hold goes on.
func TestHoldDeleted(t *testing.T) {
	dir, repo, _ := infraRepo(t)
	if err := os.Remove(filepath.Join(dir, "tests/deep/conftest.py")); err != nil {
		t.Fatal(err)
	}
	held, err := Hold(repo, testInfra)
	if err != nil {
		t.Fatal(err)
	}
	if held.Has("tests/deep/conftest.py") || !held.Has("conftest.py") {
		t.Errorf("held: %v", held.files)
	}
}

// TestGuarded: a path protected whole or at one of its keys is guarded,
// any other is not.
func TestGuarded(t *testing.T) {
	for p, want := range map[string]bool{
		"conftest.py": true, "a/b/conftest.py": true, "pyproject.toml": true, "sub/pyproject.toml": true,
		"package.json": true, "sub/package.json": false, "setup.cfg": true, "tests/test_a.py": false,
	} {
		if got := Guarded(p, testInfra); got != want {
			t.Errorf("Guarded(%s) = %v, want %v", p, got, want)
		}
	}
}
