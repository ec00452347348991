package session

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCheckResetsIndexTheSessionWrote: a session that marked a file
// assume-unchanged and changed it leaves an index that hides the change;
// Check makes it again from the base, so git sees the change. An index no
// session wrote is left as it is: what was staged before stays staged.
func TestCheckResetsIndexTheSessionWrote(t *testing.T) {
	dir, repo, base, iter := sessionRepo(t)
	// Staged before the session: stays staged when the index is untouched.
	writeFile(t, filepath.Join(dir, "staged.go"), "package main\n")
	gitIn(t, dir, "add", "staged.go")
	s, err := Seal(repo, "run-s", iter, "runner/r", base)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Hold(sessionProtected, Confinement{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check("the agent", sessionProtected); err != nil {
		t.Fatal(err)
	}
	if got := gitIn(t, dir, "diff", "--cached", "--name-only"); got != "staged.go" {
		t.Fatalf("an index no session wrote: staged %q", got)
	}

	s, err = Seal(repo, "run-s", iter, "runner/r", base)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Hold(sessionProtected, Confinement{}); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "update-index", "--assume-unchanged", "main.go")
	writeFile(t, filepath.Join(dir, "main.go"), "package main // hidden\n")
	if got := gitIn(t, dir, "status", "--porcelain", "--", "main.go"); got != "" {
		t.Fatalf("the mark does not hide the change: %q", got)
	}
	if _, err := s.Check("the agent", sessionProtected); err != nil {
		t.Fatal(err)
	}
	// (gitIn trims the status's leading space.) What the session had
	// staged is staged no more: the index is the base's.
	if got := gitIn(t, dir, "status", "--porcelain", "--", "main.go", "staged.go"); got != "M main.go\n?? staged.go" {
		t.Fatalf("after the check git sees %q", got)
	}
}

// TestIndexStamp: the stamp is "" for no file and moves when the file is
// written again, in place (its size and checksum kept) or anew; a
// relative GIT_INDEX_FILE is the work tree's.
func TestIndexStamp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "index")
	if s := indexStamp(p); s != "" {
		t.Fatalf("no file: %q", s)
	}
	data := make([]byte, 100)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	first := indexStamp(p)
	if want := "4445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f60616263"; len(first) < len(want) || first[len(first)-len(want):] != want {
		t.Fatalf("stamp %q does not end with the file's last 32 bytes", first)
	}
	if again := indexStamp(p); again != first {
		t.Fatalf("unchanged: %q then %q", first, again)
	}
	// Written in place with the same bytes: its times move.
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if indexStamp(p) == first {
		t.Fatal("a write in place left the stamp")
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := indexStamp(short); len(s) < 6 || s[len(s)-6:] != "616263" {
		t.Fatalf("a file under 32 bytes: %q", s)
	}

	_, repo, _, _ := sessionRepo(t)
	t.Setenv("GIT_INDEX_FILE", "other-index")
	g, err := sealGit(repo)
	if err != nil {
		t.Fatal(err)
	}
	if g.index != filepath.Join(repo.Root(), "other-index") || g.stamp != "" {
		t.Fatalf("GIT_INDEX_FILE: index %q stamp %q", g.index, g.stamp)
	}
	writeFile(t, g.index, "x")
	if !g.IndexTouched() {
		t.Fatal("an index that appeared is not touched")
	}
}
