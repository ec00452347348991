package git

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestHermetic: the snapshot is git's own listing of the system, global
// and command-line entries; in the hermetic environment git reads them
// from it and no file, and Strip gives a session the user's variables
// back.
func TestHermetic(t *testing.T) {
	r := newRepo(t)
	home := t.TempDir()
	writeFile := func(p, data string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", `printf '%s' "$2" > "$1"`, "sh", p, data)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	writeFile(home+"/.gitconfig", "[user]\n\tname = Someone\n[core]\n\thooksPath = /hooks\n[x \"a=b\"]\n\tflag\n")
	user := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=/usr/bin:/bin", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=y.z", "GIT_CONFIG_VALUE_0=v"}
	cmd := exec.Command("git", "-C", r.Root(), "config", "--list", "-z", "--show-scope", "--includes")
	cmd.Env = user
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	snap := ParseSnapshot(out)
	want := []Entry{{"user.name", "Someone"}, {"core.hookspath", "/hooks"}, {"x.a=b.flag", "true"}, {"y.z", "v"}}
	if !slices.Equal(snap, want) {
		t.Fatalf("snapshot = %q, want %q", snap, want)
	}
	env := HermeticEnv(user, snap)
	// The session changes the user's file: the runner's git does not see it.
	writeFile(home+"/.gitconfig", "[core]\n\thooksPath = /elsewhere\n")
	cmd = exec.Command("git", "-C", r.Root(), "config", "--get", "core.hooksPath")
	cmd.Env = env
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "/hooks" {
		t.Errorf("hermetic core.hooksPath = %q, %v", out, err)
	}
	if got := Strip(env); !slices.Equal(got, user) {
		t.Errorf("Strip = %q, want the user's %q", got, user)
	}
	if again := HermeticEnv(env, nil); !slices.Equal(again, env) {
		t.Error("a hermetic environment made hermetic again changed")
	}
}
