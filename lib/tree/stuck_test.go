package tree

import (
	"strings"
	"testing"
)

// TestStuckHint names both operator edits that free the stuck node.
func TestStuckHint(t *testing.T) {
	h := StuckHint("auth")
	if !strings.Contains(h, "tree-edit retry auth") || !strings.Contains(h, "tree-edit decompose auth") {
		t.Fatalf("StuckHint = %q", h)
	}
}
