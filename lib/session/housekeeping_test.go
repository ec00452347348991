package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/git"
)

// A repack during a session (git gc, git maintenance: the user's own git
// starts one past gc.auto) writes info/refs, packs and objects/info/packs:
// none of it is a setting a session changed. The same session writing
// info/exclude is still reported and put back.
func TestGitSettingsIgnoreHousekeeping(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-qm", "base")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := sealGit(repo)
	if err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "repack", "-a", "-d") // writes info/refs and objects/info/packs
	if m, _ := filepath.Glob(filepath.Join(dir, ".git", "info", "refs")); len(m) != 1 {
		t.Fatal("git repack wrote no info/refs: the test tests nothing")
	}
	reasons, err := g.Restore("the guard")
	if err != nil || len(reasons) != 0 {
		t.Errorf("after a repack: reasons %q, %v; want none", reasons, err)
	}

	g, err = sealGit(repo)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".git", "info", "exclude"), "*.go\n")
	gitIn(t, dir, "repack", "-a", "-d")
	reasons, err = g.Restore("the guard")
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 1 || !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, "info/exclude") }) {
		t.Errorf("reasons %q, want info/exclude alone", reasons)
	}
}

// A repack that no session started may be writing info/refs when the
// seal is taken: its temporary file (info/refs_XXXXXX), renamed over
// info/refs during the session, is not a setting the session deleted.
func TestGitSettingsIgnoreRepackTempFile(t *testing.T) {
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q", "-b", "main")
	tmp := filepath.Join(dir, ".git", "info", "refs_2Ui3YJ")
	writeFile(t, tmp, "half written\n")
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := sealGit(repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, ".git", "info", "refs")); err != nil {
		t.Fatal(err)
	}
	reasons, err := g.Restore("the guard")
	if err != nil || len(reasons) != 0 {
		t.Errorf("after the rename: reasons %q, %v; want none", reasons, err)
	}
	if _, err := os.Stat(tmp); err == nil {
		t.Error("the temporary file was put back")
	}
}

func TestHousekeepingOnly(t *testing.T) {
	for rel, want := range map[string]bool{
		"info/refs":         true,
		"info/refs_2Ui3YJ":  true,
		"info/refs_000000":  true,
		"info/refs_azAZ09":  true, // each end of each range
		"info/refs_abc@de":  false,
		"info/refs_abc[de":  false,
		"info/refs_abc`de":  false,
		"info/refs_abc{de":  false,
		"info/refs_abc/de":  false,
		"info/refs_abc:de":  false,
		"info/refs_2Ui3Y":   false,
		"info/refs_2Ui3YJK": false,
		"info/refs_2Ui3-J":  false,
		"info/refs.lock":    false,
		"info/exclude":      false,
		"info/attributes":   false,
		"hooks/refs_2Ui3YJ": false,
		"config":            false,
	} {
		if got := housekeepingOnly(rel); got != want {
			t.Errorf("housekeepingOnly(%q) = %v, want %v", rel, got, want)
		}
	}
}
