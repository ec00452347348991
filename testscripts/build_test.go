package testscripts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// builtCommands runs the tests with every treeloop command built as a user
// builds it (`go build ./cmd/...`, CGO_ENABLED=0 as the justfile sets)
// into a temporary directory put first on $PATH, so a script runs each
// command as its own program: a binary that does not link what it needs
// fails here as it would for a user. The directory is $TREELOOP_BIN for
// the tests that name a command's path. just's own binary comes next
// (nativeJustDir).
type builtCommands struct{ m *testing.M }

func (b builtCommands) Run() int {
	if os.Getenv(sigintChildEnv) == "1" {
		return b.m.Run() // TestInterruptibleCommands' child runs no command
	}
	dir, release, err := binDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testscripts:", err)
		return 1
	}
	defer release()
	if err := buildCommands(dir); err != nil {
		fmt.Fprintln(os.Stderr, "testscripts:", err)
		return 1
	}
	os.Setenv("TREELOOP_BIN", dir)
	path := dir + string(os.PathListSeparator) + os.Getenv("PATH")
	justDir, releaseJust, err := nativeJustDir()
	defer releaseJust()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testscripts: the scripts run just's wrapper:", err)
	}
	if justDir != "" {
		path = dir + string(os.PathListSeparator) + justDir + string(os.PathListSeparator) + os.Getenv("PATH")
	}
	os.Setenv("PATH", path)
	return b.m.Run()
}

// binDir is where the commands are built: a directory of the user's cache
// kept for this checkout, so that a test run after a change relinks only
// the commands it changed (go build skips a target whose build ID is
// current), held with an exclusive flock(2) for the whole run; or, while
// another run of this checkout holds it, a temporary directory. release
// unlocks the one or removes the other.
func binDir() (dir string, release func(), err error) {
	temp := func() (string, func(), error) {
		d, err := os.MkdirTemp("", "treeloop-bin-")
		return d, func() { os.RemoveAll(d) }, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return temp()
	}
	sum := sha256.Sum256([]byte(repoRoot()))
	dir = filepath.Join(cache, "treeloop-test", "bin-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return temp()
	}
	lock, err := os.OpenFile(dir+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return temp()
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return temp()
	}
	return dir, func() { lock.Close() }, nil
}

// buildCommands builds ./cmd/... into dir the way `just build` does
// (-trimpath, stripped: -s -w; the commit is not stamped), so that the
// scripts that build a copy of the checkout (`just build`, `just install`)
// find every package compiled already: the
// porcelain (cmd/runner-step, cmd/runner-loop, which run the scripts of
// tools/ embedded) among them, as `go install …/cmd/...` installs it. A
// file of dir that is no command of cmd/ (one removed since) is removed.
func buildCommands(dir string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", dir+string(os.PathSeparator), "./cmd/...")
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build ./cmd/...: %v\n%s", err, out)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(repoRoot(), "cmd", e.Name())); os.IsNotExist(err) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// porcelain are the commands that run the bash scripts of tools/: listed
// after the plumbing in the generated help, and not kong commands.
var porcelain = []string{"runner-step", "runner-loop"}

// plumbing is the shipped commands without the porcelain.
func plumbing(t *testing.T) []string {
	var out []string
	for _, name := range shippedCommands(t) {
		if !slices.Contains(porcelain, name) {
			out = append(out, name)
		}
	}
	return out
}

// trackSources stats every file of the checkout (but git's and what
// builds and evals leave), once per test binary, from inside a test: go
// test's result cache keys on the files a test reads, and the commands the
// scripts run are built and exec'd (with tools/ and examples/) by other
// processes it does not see. A change to any of them then runs the
// scripts again.
func trackSources(t *testing.T) {
	t.Helper()
	if err := trackOnce(); err != nil {
		t.Fatal(err)
	}
}

var trackOnce = sync.OnceValue(func() error {
	root := repoRoot()
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch rel, _ := filepath.Rel(root, p); rel {
			case ".git", "bin", "eval/results", "eval/workspaces":
				return filepath.SkipDir
			}
			return nil
		}
		_, err = os.Stat(p)
		return err
	})
})

// shippedCommands lists the commands in cmd/, each a binary that ships.
func shippedCommands(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(repoRoot(), "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestScriptsRunShippedBinaries holds the harness to its promise: every
// command in cmd/ resolves on the scripts' $PATH to the binary built from
// it, and no test helper shadows a shipped command.
func TestScriptsRunShippedBinaries(t *testing.T) {
	t.Parallel()
	trackSources(t)
	dir := os.Getenv("TREELOOP_BIN")
	if dir == "" {
		t.Fatal("TREELOOP_BIN is not set: TestMain did not build the commands")
	}
	for _, name := range shippedCommands(t) {
		if _, ok := helpers[name]; ok {
			t.Errorf("%s is registered as an in-process helper: the scripts would not run the shipped binary", name)
		}
		got, err := exec.LookPath(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if want := filepath.Join(dir, name); got != want {
			t.Errorf("%s resolves to %s, want the built %s", name, got, want)
		}
		out, err := exec.Command(got, "--version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), name+" ") {
			t.Errorf("%s --version: %v: %s", name, err, out)
		}
	}
}
