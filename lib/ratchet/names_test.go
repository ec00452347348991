package ratchet

import (
	"slices"
	"testing"
)

// TestNames: the names file is one run's; another run's binds nothing.
func TestNames(t *testing.T) {
	data := FormatNames("r1", []string{"a.TestB", "a.TestA"})
	if names, ok := ParseNames("r1", data); !ok || !slices.Equal(names, []string{"a.TestA", "a.TestB"}) {
		t.Errorf("ParseNames = %q, %v", names, ok)
	}
	if _, ok := ParseNames("r2", data); ok {
		t.Error("another run's names bind")
	}
}
