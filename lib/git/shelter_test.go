package git

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/proc"
)

// A git that dies of SIGTERM at its start (the signal its caller's group
// got before the git had a group of its own) fails a caller that does not
// defer signals, and runs again for one that does.
func TestKilledAtStartRunsAgain(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	runs := filepath.Join(t.TempDir(), "runs")
	script := "#!/bin/sh\necho run >> " + runs + "\nif [ ! -e " + runs + ".once ]; then : > " + runs + ".once; kill -TERM $$; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	count := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run")
	}

	if proc.Sheltered() {
		t.Fatal("signals deferred before the test")
	}
	if _, err := runEnv(dir, nil, nil, "--version"); err == nil || !killedAtStart(err) || count() != 1 {
		t.Fatalf("not deferring: err %v, %d runs; want the signal's death, 1 run", err, count())
	}
	os.Remove(runs + ".once")
	os.Remove(runs)
	proc.DeferSignals()
	out, err := runEnv(dir, nil, nil, "--version")
	if err != nil || !strings.HasPrefix(string(out), "git version") || count() != 2 {
		t.Fatalf("deferring: %q, err %v, %d runs; want git's version after 2 runs", out, err, count())
	}
	// The snapshot of the user's git config likewise.
	os.Remove(runs + ".once")
	os.Remove(runs)
	t.Setenv(HermeticVar, "")
	if _, err := HermeticEnviron(dir); err != nil || count() != 2 {
		t.Fatalf("the config snapshot: err %v, %d runs; want none after 2 runs", err, count())
	}
	// A git that fails on its own is not run again.
	os.Remove(runs)
	if _, err := runEnv(dir, nil, nil, "no-such-subcommand"); err == nil || killedAtStart(err) || count() != 1 {
		t.Fatalf("a failing git: err %v, %d runs; want its error after 1 run", err, count())
	}
}
