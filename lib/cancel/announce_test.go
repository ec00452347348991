package cancel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/layout"
)

// digest is the hex SHA-256 of data, as an announcement names it.
func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestAnnounceAnswer: an operator's announced answer is kept at Close,
// a file of the queue the session wrote itself is dropped (even one
// written at once), and the announcement is a request of its own that is
// no cancel: the session that then writes the cancel file wrote it
// itself. Announcements with bad input fail; with no judge there is
// nobody to tell.
func TestAnnounceAnswer(t *testing.T) {
	root := repo(t)
	good := digest([]byte("x"))
	for _, c := range []struct{ digest, by string }{
		{good, " \n "}, {good[:63], "op"}, {strings.ToUpper(good), "op"}, {good + "0", "op"},
	} {
		if err := AnnounceAnswer(root, c.digest, c.by); err == nil || err.Error() != "an answer is announced with its SHA-256 digest and who queues it" {
			t.Errorf("AnnounceAnswer(%q, %q): %v", c.digest, c.by, err)
		}
	}
	if err := AnnounceAnswer(root, good, "op"); err != nil {
		t.Fatalf("with no judge: %v", err)
	}

	dir := filepath.Join(root, layout.Answers)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	j, err := listen(root, outsider(t))
	if err != nil {
		t.Fatal(err)
	}
	// Written as soon as the session starts: its change time may lag the
	// clock, and the judging reaches back to take it.
	if err := os.WriteFile(filepath.Join(dir, "forged.json"), []byte("forged"), 0o644); err != nil {
		t.Fatal(err)
	}
	// An answer of exactly the largest size an announced answer may have.
	big := bytes.Repeat([]byte("a"), 1<<20)
	if err := AnnounceAnswer(root, digest(big), "  runner-ui \n"); err != nil {
		t.Fatalf("announce: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.json"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	// One byte more is never taken as announced.
	if err := AnnounceAnswer(root, digest(append(big, 'a')), "op"); err != nil {
		t.Fatalf("announce: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "huge.json"), append(big, 'a'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cancelFile(root), []byte("agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := j.Close(false)
	me := fmt.Sprintf("(pid %d)", os.Getpid())
	if want := []string{"answer queued by runner-ui " + me, "answer queued by op " + me}; !slices.Equal(v.Requests, want) {
		t.Errorf("requests %q, want %q", v.Requests, want)
	}
	if !v.Appeared || v.By != BySession {
		t.Errorf("the cancel file the session wrote: appeared %v, by %q", v.Appeared, v.By)
	}
	if want := []string{"forged.json", "huge.json"}; !slices.Equal(v.ForgedAnswers, want) {
		t.Errorf("dropped %q, want %q", v.ForgedAnswers, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "big.json")); err != nil {
		t.Errorf("the announced answer: %v", err)
	}
}

// TestAnnounceFromInside: an announcement from inside the session is
// refused and keeps nothing.
func TestAnnounceFromInside(t *testing.T) {
	root := repo(t)
	dir := filepath.Join(root, layout.Answers)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	j, err := Listen(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := AnnounceAnswer(root, digest([]byte("mine")), "agent"); !errors.Is(err, Refused) {
		t.Fatalf("announce from inside: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.json"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := j.Close(false)
	if want := fmt.Sprintf("refused: answer queued by agent (pid %d)", os.Getpid()); !slices.Equal(v.Requests, []string{want}) {
		t.Errorf("requests %q, want [%q]", v.Requests, want)
	}
	if !slices.Equal(v.ForgedAnswers, []string{"mine.json"}) {
		t.Errorf("dropped %q", v.ForgedAnswers)
	}
}

// TestRequestReplacesLink: a symbolic link in the cancel file's place is
// replaced by the file, its target left as it was.
func TestRequestReplacesLink(t *testing.T) {
	root := repo(t)
	target := filepath.Join(root, "target")
	if err := os.WriteFile(target, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, cancelFile(root)); err != nil {
		t.Fatal(err)
	}
	if err := Request(root, "runner-cancel"); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != "keep\n" {
		t.Errorf("the link's target holds %q (%v)", data, err)
	}
	st, err := os.Lstat(cancelFile(root))
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("the cancel file: %v %v", st, err)
	}
	if p, err := Read(root); err != nil || p == nil || p.By != "runner-cancel" || p.PID != os.Getpid() {
		t.Errorf("read back %+v (%v)", p, err)
	}
}

// TestSaid: the cancel file's first line in printable characters, at
// most 200 of them, in parentheses; nothing for no file or an empty one.
func TestSaid(t *testing.T) {
	root := repo(t)
	if got := Said(root); got != "" {
		t.Errorf("no file: %q", got)
	}
	long := strings.Repeat("é", 199)
	for _, c := range []struct{ data, want string }{
		{"", ""},
		{"\n", ""},
		{"\x01\x7f\n", ""},
		{"by=\"op\" pid=7\tat=x\x7f\nsecond line\n", ` (by="op" pid=7at=x)`},
		{long + "xy", " (" + long + "x)"},
		{long + "x", " (" + long + "x)"},
	} {
		if err := os.WriteFile(cancelFile(root), []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := Said(root); got != c.want {
			t.Errorf("Said of %q = %q, want %q", c.data, got, c.want)
		}
	}
}

// TestStopped: a pending request is used up and said so, naming who
// asked; with none, nothing is said; one that cannot be removed stays
// pending and says why.
func TestStopped(t *testing.T) {
	root := repo(t)
	var w strings.Builder
	Stopped(root, "runner-loop", &w)
	if w.String() != "" {
		t.Errorf("no request: %q", w.String())
	}
	if err := os.WriteFile(cancelFile(root), []byte("by=\"op\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Stopped(root, "runner-loop", &w)
	if want := "runner-loop: stopped by the cancel request (by=\"op\"), now used up: the next runner-loop runs\n"; w.String() != want {
		t.Errorf("said %q, want %q", w.String(), want)
	}
	if _, err := os.Lstat(cancelFile(root)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the request was not used up: %v", err)
	}
	// A directory in its place: it stops the loop and cannot be removed.
	if err := os.MkdirAll(filepath.Join(cancelFile(root), "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.Reset()
	Stopped(root, "runner-step", &w)
	if got := w.String(); !strings.HasPrefix(got, "runner-step: the cancel request stopped it but stays pending: ") || !strings.HasSuffix(got, ": remove .runner/cancel\n") {
		t.Errorf("said %q", got)
	}
	if _, err := os.Lstat(cancelFile(root)); err != nil {
		t.Errorf("the request is gone: %v", err)
	}
}
