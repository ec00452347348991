package session

import (
	"path/filepath"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
)

// TestRunLogsSettled: of the run's log directories, the seal trusts the
// fingerprint of every one but the current iteration's, those above it and
// those in it; a sibling whose name begins with the iteration's is
// settled like any other, and so is every file outside the iteration.
func TestRunLogsSettled(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, runDir, _, _, err := runLogs(repo, "run-1", dir)
	if err != nil {
		t.Fatal(err)
	}
	_, _, iterRel, ix, err := runLogs(repo, "run-1", filepath.Join(runDir, "w", "0003"))
	if err != nil || iterRel != "w/0003" {
		t.Fatalf("runLogs = %q, %v", iterRel, err)
	}
	for d, want := range map[string]bool{
		"w/0003": false, "w": false, "w/0003/sub": false,
		"w/0002": true, "w/00031": true, "w/0003-x": true, "x": true,
	} {
		if got := ix.SettledDir(d); got != want {
			t.Errorf("SettledDir(%q) = %v, want %v", d, got, want)
		}
	}
	for p, want := range map[string]bool{"w/0003/agent.log": false, "w/0002/agent.log": true, "w/00031/agent.log": true} {
		if got := ix.Settled(p); got != want {
			t.Errorf("Settled(%q) = %v, want %v", p, got, want)
		}
	}
}
