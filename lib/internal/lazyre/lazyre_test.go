package lazyre

import (
	"sync"
	"testing"
)

// TestNew: the expression is compiled once, on first use, side by side
// callers alike, and matches as regexp.MustCompile's does.
func TestNew(t *testing.T) {
	re := New(`^a(b+)c$`)
	var wg sync.WaitGroup
	got := make([]any, 4)
	for i := range got {
		wg.Go(func() { got[i] = re() })
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("call %d compiled again", i)
		}
	}
	if m := re().FindStringSubmatch("abbc"); len(m) != 2 || m[1] != "bb" {
		t.Fatalf("match: %q", m)
	}
	bad := New(`(`)
	defer func() {
		if recover() == nil {
			t.Fatal("a malformed expression did not panic at its first use")
		}
	}()
	bad()
}
