package testscripts

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nativeJustDir is a directory holding a link named just to just's own
// binary, for the front of the scripts' $PATH, when the just on $PATH is a
// wrapper script that starts it: just from npm (rust-just) is a node
// script that finds and starts the platform's binary, a node start at
// every start of just, and the scripts start just hundreds of times (the
// guard `just ci` of every step among them; docs/development.md has the
// figures). The program the scripts run is the same just; the wrapper is
// npm's packaging, not treeloop's to test. The
// binary is asked of just itself (its just_executable() function). It
// returns "" where just is missing or already a binary, and the function
// that removes the directory. Errors: just did not name a binary (the
// scripts then run the wrapper, as before).
func nativeJustDir() (dir string, release func(), err error) {
	release = func() {}
	onPath, err := exec.LookPath("just")
	if err != nil {
		return "", release, nil
	}
	if script, err := isScript(onPath); err != nil || !script {
		return "", release, err
	}
	tmp, err := os.MkdirTemp("", "treeloop-just-")
	if err != nil {
		return "", release, err
	}
	release = func() { os.RemoveAll(tmp) }
	justfile := filepath.Join(tmp, "justfile")
	if err := os.WriteFile(justfile, []byte("exe := just_executable()\n"), 0o644); err != nil {
		return "", release, err
	}
	out, err := exec.Command(onPath, "--justfile", justfile, "--working-directory", tmp, "--evaluate", "exe").Output()
	if err != nil {
		return "", release, fmt.Errorf("ask %s for its binary: %v", onPath, err)
	}
	exe := strings.TrimSpace(string(out))
	if !filepath.IsAbs(exe) {
		return "", release, fmt.Errorf("%s names its binary %q, not an absolute path", onPath, exe)
	}
	if script, err := isScript(exe); err != nil || script {
		return "", release, fmt.Errorf("%s names %s as its binary, which is not one (%v)", onPath, exe, err)
	}
	if err := os.Remove(justfile); err != nil {
		return "", release, err
	}
	if err := os.Symlink(exe, filepath.Join(tmp, "just")); err != nil {
		return "", release, err
	}
	return tmp, release, nil
}

// isScript reports whether the file at p (links followed) starts with
// "#!".
func isScript(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := io.ReadFull(f, head); err != nil {
		return false, err
	}
	return bytes.Equal(head, []byte("#!")), nil
}

// TestScriptsRunJustsBinary: the just the scripts find first on $PATH is a
// binary, not a wrapper script, and answers as the just installed.
func TestScriptsRunJustsBinary(t *testing.T) {
	p, err := exec.LookPath("just")
	if err != nil {
		t.Fatalf("just is not on $PATH: the scripts run it (tools/bootstrap installs it): %v", err)
	}
	if script, err := isScript(p); err != nil || script {
		t.Fatalf("the scripts' just is %s, a script (%v): nativeJustDir did not put just's binary first", p, err)
	}
	got, err := exec.Command(p, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, []byte("just ")) {
		t.Fatalf("%s --version: %q", p, got)
	}
}
