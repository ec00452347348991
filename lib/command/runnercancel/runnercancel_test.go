package runnercancel

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

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
