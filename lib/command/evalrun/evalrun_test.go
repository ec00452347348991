package evalrun

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/eval"
)

// An attempt's environment steers nothing from outside: the runner's,
// git's and the lock's variables and HOME are dropped, the rest kept, and
// git gets the eval's own identity with no system configuration.
func TestSealedEnv(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/cache")
	got := sealedEnv([]string{"PATH=/bin", "RUNNER_AGENT=codex", "GIT_DIR=/x", "HOME=/root", "TREELOOP_DIR=/t", "TREELOOP_LOCKED=1", "LANG=C", "RUNNERX=kept"})
	want := []string{"PATH=/bin", "LANG=C", "RUNNERX=kept", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=treeloop eval", "GIT_AUTHOR_EMAIL=eval@treeloop.invalid",
		"GIT_COMMITTER_NAME=treeloop eval", "GIT_COMMITTER_EMAIL=eval@treeloop.invalid"}
	if !slices.Equal(got, want) {
		t.Fatalf("sealedEnv =\n%q\nwant\n%q", got, want)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	if got := sealedEnv(nil); !slices.ContainsFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "XDG_CACHE_HOME=/") }) {
		t.Errorf("no cache directory kept when XDG_CACHE_HOME is unset: %q", got)
	}
}

// The case set's hash changes with any case's id or bytes, and with the
// boundary between two cases' files.
func TestCaseSetHash(t *testing.T) {
	dir := t.TempDir()
	file := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	a, b := file("a.toml", "x=1"), file("b.toml", "y=2")
	base := caseSetHash([]*eval.Case{{ID: "a", File: a}, {ID: "b", File: b}})
	if len(base) != 64 {
		t.Fatalf("hash %q", base)
	}
	ab, c := file("ab.toml", "x=1y"), file("c.toml", "=2")
	for name, cases := range map[string][]*eval.Case{
		"renamed":  {{ID: "a2", File: a}, {ID: "b", File: b}},
		"one case": {{ID: "a", File: a}},
		"boundary": {{ID: "a", File: ab}, {ID: "b", File: c}},
	} {
		if caseSetHash(cases) == base {
			t.Errorf("%s: same hash", name)
		}
	}
	if again := caseSetHash([]*eval.Case{{ID: "a", File: a}, {ID: "b", File: b}}); again != base {
		t.Error("the same cases hash differently")
	}
}

// A case's config tables merge into the defaults key by key, tables
// recursively; a value replaces a table and the other way round.
func TestMerge(t *testing.T) {
	dst := map[string]any{"agent": map[string]any{"backend": "codex", "model": "m"}, "max_iterations": 5, "guard": map[string]any{"command": []string{"true"}}}
	merge(dst, map[string]any{"agent": map[string]any{"model": "big"}, "max_iterations": 9, "guard": "flat"})
	agent := dst["agent"].(map[string]any)
	if agent["backend"] != "codex" || agent["model"] != "big" || dst["max_iterations"] != 9 || dst["guard"] != "flat" {
		t.Fatalf("merged %v", dst)
	}
}

// The tail keeps at least the last max bytes, and at most twice that.
func TestTailWriter(t *testing.T) {
	var buf bytes.Buffer
	w := &tailWriter{buf: &buf, max: 10}
	for i := range 100 {
		w.Write([]byte{byte('a' + i%26)})
		if buf.Len() > 20 {
			t.Fatalf("kept %d bytes", buf.Len())
		}
	}
	if got := buf.String(); !strings.HasSuffix(got, "opqrstuv") || len(got) < 10 {
		t.Fatalf("tail %q", got)
	}
}

// The copy keeps directories, files with their mode and symbolic links,
// and leaves the top-level .git out when asked.
func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	os.MkdirAll(filepath.Join(src, ".git"), 0o755)
	os.WriteFile(filepath.Join(src, ".git", "HEAD"), []byte("ref"), 0o644)
	os.MkdirAll(filepath.Join(src, "sub", ".git"), 0o755)
	os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("run.sh", filepath.Join(src, "link"))
	if err := copyTree(src, dst, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, ".git")); !os.IsNotExist(err) {
		t.Errorf("the top-level .git was copied: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dst, "sub", ".git")); err != nil || !st.IsDir() {
		t.Errorf("a nested .git was left out: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dst, "run.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("run.sh: %v %v", st, err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "link")); err != nil || l != "run.sh" {
		t.Errorf("link: %q %v", l, err)
	}
}
