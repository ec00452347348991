package cancel

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/layout"
)

// A request's line says who and when; a touched file says neither and
// reads as its mtime; Clear removes it once.
func TestReadAndClear(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, layout.Runner), 0o755)
	if p, err := Read(root); p != nil || err != nil {
		t.Fatalf("no file: %v %v", p, err)
	}
	if err := Request(root, "ops team"); err != nil {
		t.Fatal(err)
	}
	p, err := Read(root)
	if err != nil || p == nil || p.By != "ops team" || p.PID != os.Getpid() || time.Since(p.At) > time.Minute {
		t.Fatalf("Read = %+v, %v", p, err)
	}
	if ok, err := Clear(root); !ok || err != nil {
		t.Fatalf("Clear = %v, %v", ok, err)
	}
	if ok, err := Clear(root); ok || err != nil {
		t.Fatalf("Clear again = %v, %v", ok, err)
	}
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for content, want := range map[string]Pending{
		"":                         {At: mtime},
		"stop\n":                   {At: mtime},
		"by=\"x\"":                 {At: mtime},
		"by=unquoted pid=1 at=x\n": {PID: 1, At: mtime},
		"by=\"a b\" pid=7 at=2026-05-06T07:08:09Z\n": {By: "a b", PID: 7, At: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)},
	} {
		if p := Parse([]byte(content), mtime); *p != want {
			t.Errorf("Parse(%q) = %+v, want %+v", content, p, want)
		}
	}
}

// UseUp removes the request that stopped a runner and says what it was;
// with none it says so; one it cannot remove stays pending.
func TestUseUp(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, layout.Runner), 0o755)
	if p, err := UseUp(root); p != nil || err != nil {
		t.Fatalf("nothing pending: %+v %v", p, err)
	}
	if err := Request(root, "ops"); err != nil {
		t.Fatal(err)
	}
	if p, err := UseUp(root); err != nil || p == nil || p.By != "ops" {
		t.Fatalf("UseUp = %+v, %v", p, err)
	}
	if p, _ := Read(root); p != nil {
		t.Fatalf("still pending: %+v", p)
	}
	// A directory in its place still stops a runner, and cannot be
	// removed while it holds something.
	os.MkdirAll(filepath.Join(root, layout.Cancel, "x"), 0o755)
	if p, err := UseUp(root); err == nil || p != nil {
		t.Fatalf("a full directory: %+v %v", p, err)
	}
	if p, _ := Read(root); p == nil {
		t.Fatal("the request that could not be removed is gone")
	}
}
