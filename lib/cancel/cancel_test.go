package cancel

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Files of the answer queue changed since the session began are dropped
// unless an operator announced their bytes; files from before it, and
// files being written (a dot name), stay.
func TestDropAnswers(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"forged.json", "announced.json", ".temp"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256([]byte("announced.json"))
	announced := map[string]bool{hex.EncodeToString(sum[:]): true}
	// A session that began after the files were written drops none.
	if got := DropAnswers(dir, time.Now().Add(time.Hour), announced); len(got) != 0 {
		t.Errorf("dropped files from before the session: %q", got)
	}
	// One that began before: the unannounced file is the session's.
	if got := DropAnswers(dir, time.Now().Add(-time.Hour), announced); !slices.Equal(got, []string{"forged.json"}) {
		t.Errorf("dropped %q, want [forged.json]", got)
	}
	// With nothing announced (a session that ended without its judge),
	// every file changed since is dropped.
	if got := DropAnswers(dir, time.Now().Add(-time.Hour), nil); !slices.Equal(got, []string{"announced.json"}) {
		t.Errorf("without a judge dropped %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".temp")); err != nil {
		t.Errorf("a file being written was removed: %v", err)
	}
}
