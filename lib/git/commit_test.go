package git

import (
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// commitTwice makes the same commit of what is staged twice: with
// CommitIndexAs, then, HEAD and the index put back, with `git commit -F`
// (CommitAs), at fixed dates; it returns both ids, and whether the first
// left .git/COMMIT_EDITMSG (only `git commit` writes it).
func commitTwice(t *testing.T, r *Repo, msg string) (plumbing, porcelain string, editmsg bool) {
	t.Helper()
	t.Setenv("GIT_AUTHOR_DATE", "2026-11-23T12:00:00Z")
	t.Setenv("GIT_COMMITTER_DATE", "2026-11-23T12:00:00Z")
	editmsgPath := filepath.Join(r.Root(), ".git", "COMMIT_EDITMSG")
	os.Remove(editmsgPath)
	plumbing, err := r.CommitIndexAs("loop", msg, Staged{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = os.Stat(editmsgPath)
	editmsg = err == nil
	if head, _ := r.HeadCommit(); head != plumbing {
		t.Fatalf("HEAD is %s after CommitIndexAs returned %s", head, plumbing)
	}
	if _, err := r.Run("reset", "-q", "--soft", "HEAD~"); err != nil {
		t.Fatal(err)
	}
	porcelain, err = r.CommitAs("loop", msg)
	if err != nil {
		t.Fatal(err)
	}
	return plumbing, porcelain, editmsg
}

// TestDifferentialCommitIndexAs: without hooks or settings only git commit
// honours, the plumbing commit is byte for byte the commit git commit
// makes (same id at the same dates: tree, parent, identity, message
// cleanup), it does not go through git commit, and HEAD's and the
// branch's reflogs read as git commit's.
func TestDifferentialCommitIndexAs(t *testing.T) {
	r := newRepo(t)
	write(t, r, "a.txt", "a\n")
	base := commitAll(t, r, "base")
	write(t, r, "a.txt", "changed\n")
	write(t, r, "dir/b.txt", "new\n")
	if err := r.AddAll(); err != nil {
		t.Fatal(err)
	}
	msg := "\n\nrunner: run-1 iter 2 node n1 status=done guard=pass  \n\n\n\nThe summary\t \nsecond line\n\n\nTreeloop-Tests: 3\n\n"
	plumbing, porcelain, editmsg := commitTwice(t, r, msg)
	if plumbing != porcelain {
		a, _ := r.Run("cat-file", "-p", plumbing)
		b, _ := r.Run("cat-file", "-p", porcelain)
		t.Fatalf("the plumbing commit differs from git commit's:\n%s\n---\n%s", a, b)
	}
	if editmsg {
		t.Errorf("CommitIndexAs went through git commit (COMMIT_EDITMSG written) with no hook or setting asking for it")
	}
	if parent, _ := r.Run("rev-parse", "HEAD~"); strings.TrimSpace(string(parent)) != base {
		t.Errorf("parent = %s, want %s", parent, base)
	}
	if st, _ := r.StatusPorcelain(); len(st) != 0 {
		t.Errorf("status after the commit: %q", st)
	}
	for _, ref := range []string{"HEAD", "main"} {
		out, err := r.Run("reflog", "-1", "--format=%gs", ref)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.TrimSpace(string(out)), "commit: runner: run-1 iter 2 node n1 status=done guard=pass"; got != want {
			t.Errorf("%s reflog = %q, want %q", ref, got, want)
		}
	}
	// Nothing staged: still one commit (--allow-empty).
	plumbing, porcelain, _ = commitTwice(t, r, "empty")
	if plumbing != porcelain {
		t.Errorf("empty commit: plumbing %s, git commit %s", plumbing, porcelain)
	}
}

// TestCommitIndexAsHonoursGitCommit: a commit-msg hook, core.hooksPath and
// commit.gpgSign each send the commit through git commit, so the hook
// runs and the commit is signed (gpg.program a script that speaks gpg's
// status protocol).
func TestCommitIndexAsHonoursGitCommit(t *testing.T) {
	t.Run("commit-msg hook", func(t *testing.T) {
		r := newRepo(t)
		write(t, r, "a.txt", "a\n")
		commitAll(t, r, "base")
		hook := filepath.Join(r.Root(), ".git", "hooks", "commit-msg")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'Hooked: yes' >> \"$1\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := r.CommitIndexAs("loop", "subject", Staged{}); err != nil {
			t.Fatal(err)
		}
		if msg, _ := r.CommitMessage("HEAD"); !strings.Contains(msg, "Hooked: yes") {
			t.Errorf("the commit-msg hook did not run: message %q", msg)
		}
	})
	t.Run("core.hooksPath", func(t *testing.T) {
		r := newRepo(t)
		write(t, r, "a.txt", "a\n")
		commitAll(t, r, "base")
		hooks := t.TempDir()
		if err := os.WriteFile(filepath.Join(hooks, "post-commit"), []byte("#!/bin/sh\ntouch \"$(git rev-parse --git-dir)/post-commit-ran\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Run("config", "core.hooksPath", hooks); err != nil {
			t.Fatal(err)
		}
		if _, err := r.CommitIndexAs("loop", "subject", Staged{}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(r.Root(), ".git", "post-commit-ran")); err != nil {
			t.Errorf("the post-commit hook under core.hooksPath did not run: %v", err)
		}
	})
	t.Run("commit.gpgSign", func(t *testing.T) {
		r := newRepo(t)
		write(t, r, "a.txt", "a\n")
		commitAll(t, r, "base")
		gpg := filepath.Join(t.TempDir(), "gpg")
		script := "#!/bin/sh\ncat >/dev/null\necho '[GNUPG:] SIG_CREATED D 1 8 00 1 ABCDEF' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\n\\nc2lnbmVk\\n-----END PGP SIGNATURE-----\\n'\n"
		if err := os.WriteFile(gpg, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, kv := range [][2]string{{"commit.gpgSign", "true"}, {"gpg.program", gpg}, {"user.signingKey", "ABCDEF"}} {
			if _, err := r.Run("config", kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		sha, err := r.CommitIndexAs("loop", "subject", Staged{})
		if err != nil {
			t.Fatal(err)
		}
		if raw, _ := r.Run("cat-file", "-p", sha); !strings.Contains(string(raw), "gpgsig -----BEGIN PGP SIGNATURE-----") {
			t.Errorf("commit.gpgSign on, the commit is not signed:\n%s", raw)
		}
	})
}

// TestCleanupIsGitStripspace: Cleanup cleans a message as git's whitespace
// cleanup does (git stripspace, which git commit -F applies).
func TestCleanupIsGitStripspace(t *testing.T) {
	r := newRepo(t)
	for _, msg := range []string{
		"subject",
		"subject\n",
		"\n\n  \nsubject  \t\n\n\n\nbody\n  line \n\n",
		"a\r\nb\r\n",
		"# not a comment here\n\n#body",
		" leading space kept\n\n\n",
		"\n \n\t\n",
		"",
		"tab\tinside\vend\v\n\fx",
	} {
		out, err := runEnv(r.Root(), nil, []byte(msg), "stripspace")
		if err != nil {
			t.Fatal(err)
		}
		if got := Cleanup(msg); got != string(out) {
			t.Errorf("Cleanup(%q) = %q, git stripspace: %q", msg, got, out)
		}
	}
}

// TestNeedsMaintenance: git's gc.auto test, on the entries of objects/17
// named as loose objects.
func TestNeedsMaintenance(t *testing.T) {
	objects := t.TempDir()
	if needsMaintenance(objects, 6700) {
		t.Error("no objects/17: maintenance wanted")
	}
	dir := filepath.Join(objects, "17")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	add := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 27 {
		add(strings.Repeat("a", 36) + string(rune('a'+i/16)) + string("0123456789abcdef"[i%16]))
	}
	add("tmp_obj_123") // not an object
	if needsMaintenance(objects, 6700) {
		t.Error("27 loose objects in 17/ (threshold 27): maintenance wanted")
	}
	add(strings.Repeat("b", 38))
	if !needsMaintenance(objects, 6700) {
		t.Error("28 loose objects in 17/: maintenance not wanted")
	}
	if needsMaintenance(objects, 0) {
		t.Error("gc.auto=0 (off): maintenance wanted")
	}
	if !needsMaintenance(objects, 256) {
		t.Error("gc.auto=256 (threshold 1): maintenance not wanted")
	}
}

// looseIn17 counts the loose objects in objects/17, the directory git's
// gc.auto test samples.
func looseIn17(t *testing.T, r *Repo) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(r.Root(), ".git", "objects", "17"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(ents)
}

// packs counts the pack files.
func packs(t *testing.T, r *Repo) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(r.Root(), ".git", "objects", "pack", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// stagePastGCAuto stages new files until objects/17 holds 4 loose
// objects: past gc.auto = 256 (more than 1 there). The files' contents are
// chosen so that their blobs' SHA-1 ids start with 17 (git samples that
// directory alone), so four files do what thousands of arbitrary ones
// would; in a repository of another object format the loop stages such
// files until git's own count is reached all the same.
func stagePastGCAuto(t *testing.T, r *Repo) {
	t.Helper()
	for i := 0; looseIn17(t, r) < 4; i++ {
		for j, content := range blobsIn17(i, 4) {
			write(t, r, filepath.Join("f", strconv.Itoa(i), strconv.Itoa(j)), content)
		}
		if err := r.AddAll(); err != nil {
			t.Fatal(err)
		}
		if i > 1000 {
			t.Fatalf("objects/17 holds %d loose objects after %d rounds", looseIn17(t, r), i)
		}
	}
}

// blobsIn17 returns n file contents, distinct for each seed, whose git
// blob ids (SHA-1 of "blob <size>\x00<content>") start with the byte 0x17.
func blobsIn17(seed, n int) []string {
	var out []string
	for k := 0; len(out) < n; k++ {
		content := fmt.Sprintf("%d-%d\n", seed, k)
		sum := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(content), content)))
		if sum[0] == 0x17 {
			out = append(out, content)
		}
	}
	return out
}

// TestCommitHousekeepsInTheForeground: past gc.auto, a commit of the
// runner's (the plumbing one, and git commit's when a hook sends it
// there) runs git's housekeeping before it returns, so nothing git
// started still writes the git directory when the next session runs:
// the loose objects are packed at return and no gc holds gc.pid. The
// user's gc.auto = 0 and maintenance.auto = false mean never.
func TestCommitHousekeepsInTheForeground(t *testing.T) {
	for _, tt := range []struct {
		name     string
		config   [][2]string
		hook     bool
		wantPack bool
	}{
		{"plumbing", [][2]string{{"gc.auto", "256"}}, false, true},
		{"git commit", [][2]string{{"gc.auto", "256"}}, true, true},
		{"gc.auto 0", [][2]string{{"gc.auto", "0"}}, false, false},
		{"gc.auto 0, git commit", [][2]string{{"gc.auto", "0"}}, true, false},
		{"maintenance.auto false", [][2]string{{"gc.auto", "256"}, {"maintenance.auto", "false"}}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRepo(t)
			for _, kv := range tt.config {
				if _, err := r.Run("config", kv[0], kv[1]); err != nil {
					t.Fatal(err)
				}
			}
			if tt.hook {
				write(t, r, ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n")
				if err := os.Chmod(filepath.Join(r.Root(), ".git/hooks/pre-commit"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			stagePastGCAuto(t, r)
			if _, err := r.CommitIndexAs("loop", "a commit past gc.auto", Staged{}); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(r.Root(), ".git", "gc.pid")); err == nil {
				t.Error("gc.pid exists when the commit returned: a gc still runs")
			}
			packed := packs(t, r) > 0 && looseIn17(t, r) <= 1
			if packed != tt.wantPack {
				t.Errorf("packed at return: %v (packs %d, loose in 17/ %d), want %v", packed, packs(t, r), looseIn17(t, r), tt.wantPack)
			}
		})
	}
}

// TestRunnerGitStartsNoHousekeeping: the runner's own git commands run
// with git's automatic housekeeping off: past the user's gc.auto, with
// gc.autoDetach off (so that a gc git started would have finished at
// return), a git commit through runEnv packs nothing; git config still
// reads the user's gc.auto.
func TestRunnerGitStartsNoHousekeeping(t *testing.T) {
	r := newRepo(t)
	for _, kv := range [][2]string{{"gc.auto", "256"}, {"gc.autoDetach", "false"}, {"maintenance.autoDetach", "false"}} {
		if _, err := r.Run("config", kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := r.Run("config", "gc.auto"); err != nil || strings.TrimSpace(string(out)) != "256" {
		t.Fatalf("git config gc.auto = %q, %v: want the user's 256", out, err)
	}
	stagePastGCAuto(t, r)
	if _, err := runEnv(r.Root(), nil, []byte("m"), "commit", "-q", "-F", "-"); err != nil {
		t.Fatal(err)
	}
	if n := packs(t, r); n != 0 {
		t.Errorf("%d packs after the runner's git commit: it started git's housekeeping", n)
	}
}

// TestHousekeepingBacksOffUnreachable: loose objects nothing references
// (as the seal's copies) keep the count past gc.auto after a gc: the
// runner writes gc.log as git's gc would, and runs no housekeeping after
// its next commits until gc.log is a day old.
func TestHousekeepingBacksOffUnreachable(t *testing.T) {
	r := newRepo(t)
	if _, err := r.Run("config", "gc.auto", "256"); err != nil {
		t.Fatal(err)
	}
	write(t, r, "a.txt", "a\n")
	commitAll(t, r, "base")
	outside := t.TempDir()
	for i := 0; looseIn17(t, r) < 4; i++ {
		var paths strings.Builder
		for j := range 512 {
			p := filepath.Join(outside, strconv.Itoa(i*512+j))
			if err := os.WriteFile(p, []byte("unreachable "+p+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			paths.WriteString(p + "\n")
		}
		if _, err := runEnv(r.Root(), nil, []byte(paths.String()), "hash-object", "-w", "--stdin-paths"); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(n int) {
		t.Helper()
		write(t, r, "a.txt", strconv.Itoa(n)+"\n")
		if err := r.AddAll(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.CommitIndexAs("loop", "step "+strconv.Itoa(n), Staged{}); err != nil {
			t.Fatal(err)
		}
	}
	gcLog := filepath.Join(r.Root(), ".git", "gc.log")
	commit(1)
	if packs(t, r) != 1 {
		t.Fatalf("%d packs after the first commit past gc.auto, want the housekeeping's 1", packs(t, r))
	}
	if data, err := os.ReadFile(gcLog); err != nil || !strings.Contains(string(data), "unreachable loose objects") {
		t.Fatalf("gc.log: %q, %v", data, err)
	}
	commit(2)
	if packs(t, r) != 1 {
		t.Errorf("%d packs after the next commit: housekeeping ran again while gc.log is fresh", packs(t, r))
	}
	old := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(gcLog, old, old); err != nil {
		t.Fatal(err)
	}
	commit(3)
	if packs(t, r) != 2 {
		t.Errorf("%d packs once gc.log is a day old, want 2", packs(t, r))
	}
}
