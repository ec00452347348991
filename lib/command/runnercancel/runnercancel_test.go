package runnercancel

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/layout"
)

// --clear withdraws a pending request, saying who had asked and when, and
// says none when there is nothing to withdraw.
func TestClear(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, layout.Runner), 0o755)
	var out, errb bytes.Buffer
	if code := Main([]string{"-C", dir, "--clear"}, nil, &out, &errb); code != 0 || out.String() != "cancel=none\n" {
		t.Fatalf("nothing pending: exit %d %q %q", code, out.String(), errb.String())
	}
	out.Reset()
	if code := Main([]string{"-C", dir, "--by", "ops"}, nil, &out, &errb); code != 0 {
		t.Fatalf("request: exit %d %q", code, errb.String())
	}
	out.Reset()
	if code := Main([]string{"-C", dir, "--clear"}, nil, &out, &errb); code != 0 || !regexp.MustCompile(`^cancel=cleared by="ops" at=\S+Z file=\.runner/cancel\n$`).MatchString(out.String()) {
		t.Fatalf("clear: exit %d %q %q", code, out.String(), errb.String())
	}
	if _, err := os.Lstat(filepath.Join(dir, layout.Cancel)); !os.IsNotExist(err) {
		t.Fatalf("the cancel file is still there: %v", err)
	}
}

// A request from inside the running session (here the judge listens in
// this very process, so the caller is the session) is refused with exit 1
// and writes nothing, and the judge records the refusal; a cancel file that
// cannot be written is exit 6; outside any session the request stands.
func TestExits(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, layout.Runner), 0o755)
	j, err := cancel.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Main([]string{"-C", dir, "--by", "agent"}, nil, &out, &errb)
	v := j.Close(false)
	if code != 1 || out.Len() != 0 || !strings.Contains(errb.String(), "refused") {
		t.Fatalf("from inside the session: exit %d %q %q, want 1 and refused", code, out.String(), errb.String())
	}
	if _, err := os.Lstat(filepath.Join(dir, layout.Cancel)); !os.IsNotExist(err) {
		t.Fatalf("a refused request wrote the cancel file: %v", err)
	}
	if len(v.Requests) != 1 || !strings.HasPrefix(v.Requests[0], "refused: agent") || v.Appeared {
		t.Fatalf("the judge's verdict: %+v", v)
	}

	errb.Reset()
	os.Mkdir(filepath.Join(dir, layout.Cancel), 0o755)
	if code := Main([]string{"-C", dir}, nil, &out, &errb); code != 6 || !strings.Contains(errb.String(), layout.Cancel) {
		t.Fatalf("an unwritable cancel file: exit %d %q, want 6", code, errb.String())
	}
	os.Remove(filepath.Join(dir, layout.Cancel))

	errb.Reset()
	if code := Main([]string{"-C", dir, "--json"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), `"cancel": "requested"`) {
		t.Fatalf("no session runs: exit %d %q %q", code, out.String(), errb.String())
	}
}
