package session

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/seal"
)

var sessionProtected = []string{"ci/*.sh", "append-only:tests"}

// sessionRepo is a repository on runner/r with run run-s's first
// iteration logged and its second allocated; hooks live outside .git
// (core.hooksPath). It returns the directory, the repository, the base
// commit and the second iteration's directory.
func sessionRepo(t *testing.T) (string, *git.Repo, string, string) {
	t.Helper()
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "runner/r")
	for p, data := range map[string]string{"ci/check.sh": "exit 0\n", "tests/a_test.go": "package a\n", "main.go": "package main\n", ".runner/GOAL.md": "# Goal\n"} {
		writeFile(t, filepath.Join(dir, p), data)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := gitIn(t, dir, "rev-parse", "HEAD")
	hooks := filepath.Join(dir, "..", "hooks-"+filepath.Base(dir))
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "config", "core.hooksPath", hooks)
	run := filepath.Join(dir, filepath.FromSlash(layout.Iterations), "run-s")
	writeFile(t, filepath.Join(run, "0001", "begin.json"), "{\"iteration\": 1}\n")
	writeFile(t, filepath.Join(run, "0001", "meta.json"), "{\"iteration\": 1}\n")
	iter := filepath.Join(run, "0002")
	writeFile(t, filepath.Join(iter, "begin.json"), "{\"iteration\": 2}\n")
	return dir, repo, base, iter
}

// TestSessionCheck: a session that touched git's settings (the hooks
// outside .git included), an earlier iteration's log and a protected path
// gets one reason for each, in that order, and everything is put back;
// what the caller itself writes in the iteration is its own.
func TestSessionCheck(t *testing.T) {
	dir, repo, base, iter := sessionRepo(t)
	s, err := Seal(repo, "run-s", iter, "runner/r", base, "output.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Hold(sessionProtected, Confinement{}); err != nil {
		t.Fatal(err)
	}
	hooks := gitIn(t, dir, "config", "core.hooksPath")
	writeFile(t, filepath.Join(hooks, "pre-commit"), "#!/bin/sh\nexit 0\n")
	gitIn(t, dir, "config", "user.name", "the agent")
	log1 := filepath.Join(filepath.Dir(iter), "0001", "meta.json")
	writeFile(t, log1, "{\"iteration\": 1, \"passes\": true}\n")
	writeFile(t, filepath.Join(iter, "output.json"), "{}\n")
	writeFile(t, filepath.Join(dir, "ci/check.sh"), "exit 1\n")
	reasons, err := s.Check("the agent", sessionProtected)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"the agent changed git's settings: .git/config changed; the runner put it back",
		"the agent changed git's settings: " + filepath.Base(hooks) + "/pre-commit added; the runner put it back",
		"the agent changed the protected path ci/check.sh (protected_paths ci/*.sh); the runner restored it",
		"the agent touched the runner's iteration log: .runner/iterations/run-s/0001/meta.json changed; the runner put it back",
	}
	if len(reasons) != len(want) {
		t.Fatalf("reasons:\n%s\nwant:\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
	for i, r := range reasons {
		// The seal's notes word the path; the reasons' order and who are the check's.
		if w := want[i]; !strings.HasPrefix(r, w[:strings.Index(w, ": ")+2]) || !strings.HasSuffix(r, w[strings.LastIndex(w, ";"):]) {
			t.Errorf("reason %d: %q, want like %q", i, r, w)
		}
	}
	if _, err := os.Stat(filepath.Join(hooks, "pre-commit")); err == nil {
		t.Error("the hook the session added is still there")
	}
	if data, _ := os.ReadFile(log1); string(data) != "{\"iteration\": 1}\n" {
		t.Errorf("the earlier log holds %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(iter, "output.json")); string(data) != "{}\n" {
		t.Errorf("the caller's own file holds %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); strings.Contains(string(data), "the agent") {
		t.Error("git's config was not put back")
	}
}

// TestSealDigest: the digest a step keeps before a session tells, after a
// session that ended unchecked, whether git's settings and the seal index
// are still as sealed; RestoreLogs then puts back the earlier logs.
func TestSealDigest(t *testing.T) {
	dir, repo, base, iter := sessionRepo(t)
	// The earlier iteration's logs, settled, are indexed by the seal.
	settle(t, filepath.Join(filepath.Dir(iter), "0001"))
	s, err := Seal(repo, "run-s", iter, "runner/r", base)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Hold(sessionProtected, Confinement{}); err != nil {
		t.Fatal(err)
	}
	d := s.Digest()
	if !regexp.MustCompile(`^git:[0-9a-f]{64},index:[0-9a-f]{64}$`).MatchString(d) {
		t.Fatalf("digest %q", d)
	}
	if g, i, err := CheckSealed(repo, "run-s", d); err != nil || !g || !i {
		t.Fatalf("as sealed: %v %v %v", g, i, err)
	}
	// The session ends unchecked, having changed a log and git's config.
	log1 := filepath.Join(filepath.Dir(iter), "0001", "begin.json")
	writeFile(t, log1, "{\"iteration\": 7}\n")
	gitIn(t, dir, "config", "user.name", "the agent")
	if g, i, err := CheckSealed(repo, "run-s", d); err != nil || g || !i {
		t.Fatalf("git's config changed: %v %v %v", g, i, err)
	}
	reasons, err := RestoreLogs(repo, "run-s", iter, "the guard")
	if err != nil || len(reasons) != 1 || !strings.HasPrefix(reasons[0], "the guard touched the runner's iteration log: .runner/iterations/run-s/0001/begin.json") ||
		!strings.HasSuffix(reasons[0], "; the runner put it back") {
		t.Fatalf("RestoreLogs: %q %v", reasons, err)
	}
	if data, _ := os.ReadFile(log1); string(data) != "{\"iteration\": 1}\n" {
		t.Errorf("the log holds %q", data)
	}
	index := filepath.Join(filepath.Dir(iter), SealIndex)
	writeFile(t, index, "forged\n")
	if _, i, err := CheckSealed(repo, "run-s", d); err != nil || i {
		t.Fatalf("a changed seal index passed: %v %v", i, err)
	}
	for range 2 {
		if err := DropSealIndex(repo, "run-s"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(index); err == nil {
		t.Fatal("the seal index is still there")
	}
	if _, i, err := CheckSealed(repo, "run-s", d[:strings.Index(d, ",")]+",index:none"); err != nil || !i {
		t.Fatalf("no index, digest none: %v %v", i, err)
	}
}

func TestParseDigest(t *testing.T) {
	sum := strings.Repeat("a", 64)
	for d, ok := range map[string]bool{
		"git:" + sum + ",index:" + sum:     true,
		"git:" + sum + ",index:none":       true,
		"git:" + sum + ",index:confined":   true,
		"git:" + sum + "index:none":        false,
		"gut:" + sum + ",index:none":       false,
		"git:" + sum + ",idx:none":         false,
		"git:" + sum[1:] + ",index:none":   false,
		"git:" + sum + ",index:" + sum[1:]: false,
		"":                                 false,
	} {
		if _, _, got := parseDigest(d); got != ok {
			t.Errorf("parseDigest(%q) ok = %v, want %v", d, got, ok)
		}
	}
	_, repo, _, _ := sessionRepo(t)
	if _, _, err := CheckSealed(repo, "run-s", "nonsense"); err == nil || !strings.Contains(err.Error(), "is not a seal digest") {
		t.Errorf("CheckSealed(nonsense): %v", err)
	}
	if disjoint(nil, "x") || !disjoint([]string{"ci"}, "cia") || disjoint([]string{"a/b"}, "a") || disjoint([]string{"a"}, "a/b") {
		t.Error("disjoint")
	}
}

// settle waits until every file under dir has a change time older than
// the seal index's racy window, so that a seal indexes it.
func settle(t *testing.T, dir string) {
	t.Helper()
	var last time.Time
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if ct, ok := fsutil.ChangeTime(st); ok && ct.After(last) {
			last = ct
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(last.Add(seal.RacyWindow + time.Millisecond)))
}

// TestConfinedSession: a session the sandbox shows the run's earlier
// iterations read-only has only the current iteration sealed (by its
// bytes): the earlier logs are neither read nor indexed, the digest says
// so, and a change to the current iteration is still put back.
func TestConfinedSession(t *testing.T) {
	dir, repo, base, iter := sessionRepo(t)
	settle(t, filepath.Join(filepath.Dir(iter), "0001"))
	s, err := Seal(repo, "run-s", iter, "runner/r", base, "output.json")
	if err != nil {
		t.Fatal(err)
	}
	sb := config.Default().Sandbox
	sb.Mode = config.SandboxBwrap
	if err := s.Hold(sessionProtected, Confinement{Sandbox: sb, Root: dir, Writable: []string{filepath.Join(iter, "output.json")}}); err != nil {
		t.Fatal(err)
	}
	d := s.Digest()
	if !strings.HasSuffix(d, ",index:confined") {
		t.Fatalf("digest %q", d)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(iter), SealIndex)); err == nil {
		t.Error("a confined session's seal indexed the earlier logs")
	}
	if g, i, err := CheckSealed(repo, "run-s", d); err != nil || !g || !i {
		t.Fatalf("as sealed: %v %v %v", g, i, err)
	}
	begin := filepath.Join(iter, "begin.json")
	writeFile(t, begin, "{\"iteration\": 7}\n")
	writeFile(t, filepath.Join(iter, "output.json"), "{}\n")
	reasons, err := s.Check("the agent", sessionProtected)
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 1 || reasons[0] != "the agent touched the runner's iteration log: .runner/iterations/run-s/0002/begin.json changed; the runner put it back" {
		t.Fatalf("reasons: %q", reasons)
	}
	if data, _ := os.ReadFile(begin); string(data) != "{\"iteration\": 2}\n" {
		t.Errorf("begin.json holds %q", data)
	}
	// Unconfined, the same session seals the earlier logs by the index.
	s, err = Seal(repo, "run-s", iter, "runner/r", base, "output.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Hold(sessionProtected, Confinement{Sandbox: config.Default().Sandbox, Root: dir}); err != nil {
		t.Fatal(err)
	}
	if d := s.Digest(); !regexp.MustCompile(`,index:[0-9a-f]{64}$`).MatchString(d) {
		t.Fatalf("unconfined digest %q", d)
	}
}
