package runnerenter

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	keepEnv(t)
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// keepEnv puts the process's environment back as it is now once t ends:
// env --hermetic makes this process's git hermetic (git.Hermetic).
func keepEnv(t *testing.T) {
	before := os.Environ()
	t.Cleanup(func() {
		os.Clearenv()
		for _, kv := range before {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	})
}

// repo is a git repository with a .runner directory and a subdirectory.
func repo(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	for _, d := range []string{".runner", "sub"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestEnvLines: from a subdirectory, the lines go to the root, drop
// TREELOOP_DIR, tell the git directories (git rev-parse's, one a line)
// and open descriptor 9; with --hermetic they make git hermetic, keeping
// the user's own values.
func TestEnvLines(t *testing.T) {
	root := repo(t)
	t.Setenv("TREELOOP_GIT_HERMETIC", "")
	os.Unsetenv("TREELOOP_GIT_HERMETIC")
	t.Setenv("GIT_CONFIG_GLOBAL", "/my/it's")
	t.Setenv("RUNNER_STEP_GIT_DIRS", "/stale")
	git := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-common-dir", "--git-dir", "--git-path", "hooks")
	git.Dir = root
	want, err := git.Output()
	if err != nil {
		t.Fatal(err)
	}
	dirs := strings.TrimSuffix(string(want), "\n")
	code, out, errs := run(t, "env", "--as", "runner-step", "--hermetic", "-C", filepath.Join(root, "sub"))
	if code != 0 || errs != "" {
		t.Fatalf("env: %d %q", code, errs)
	}
	for _, want := range []string{
		"cd -- '" + root + "' || exit 6\nunset TREELOOP_DIR\n",
		"export RUNNER_STEP_GIT_DIRS='" + dirs + "'\n",
		"export GIT_CONFIG_GLOBAL='/dev/null'\n",
		"export TREELOOP_USER_GIT_CONFIG_GLOBAL='/my/it'\\''s'\n",
		"export TREELOOP_GIT_HERMETIC='1'\n",
		"exec 9>>.runner/lock\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("env: no %q in\n%s", want, out)
		}
	}
	// The lines, run by the shell, leave it where they say.
	sh := exec.Command("bash", "-c", out+`echo "$PWD $GIT_CONFIG_GLOBAL $TREELOOP_USER_GIT_CONFIG_GLOBAL $RUNNER_STEP_GIT_DIRS"; [ /dev/fd/9 -ef .runner/lock ] && echo lock`)
	got, err := sh.CombinedOutput()
	if err != nil || string(got) != root+" /dev/null /my/it's "+dirs+"\nlock\n" {
		t.Errorf("the lines in bash: %v %q", err, got)
	}
	if _, out, _ := run(t, "env", "--as", "runner-loop", "-C", root); strings.Contains(out, "GIT_CONFIG") {
		t.Errorf("without --hermetic: %q", out)
	}
}

// TestEnvRefusals: each refusal in the porcelain's name, with its code.
func TestEnvRefusals(t *testing.T) {
	root := repo(t)
	outside := t.TempDir()
	if err := os.Remove(filepath.Join(root, ".runner")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-C", filepath.Join(root, "nope"), "--usage", "usage: runner-step [-C DIR]"}, 80, "runner-step: -C " + filepath.Join(root, "nope") + ": not a directory\nusage: runner-step [-C DIR]\n"},
		{[]string{"-C", outside}, 1, "runner-step: " + outside + " is not inside a git repository: run it in your project's repository\n"},
		{[]string{"-C", root}, 1, "runner-step: no .runner in " + root + ": run runner-init --goal GOAL.md, then runner-start\n"},
	} {
		code, out, errs := run(t, append([]string{"env", "--as", "runner-step"}, c.args...)...)
		if code != c.code || out != "" || errs != c.msg {
			t.Errorf("%v: %d %q %q", c.args, code, out, errs)
		}
	}
}

// TestLock: bash opens descriptor 9 and runner-enter lock takes the lock
// on it, writing the holder; a second runner is refused naming it.
func TestLock(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "runner-enter")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/treeloop/treeloop/cmd/runner-enter").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v: %s", err, out)
	}
	root := repo(t)
	script := `exec 9>>.runner/lock; ` + bin + ` lock --as runner-loop --pid 4242 || exit; cat .runner/lock
		bash -c 'exec 9>>.runner/lock; ` + bin + ` lock --as runner-step --pid $$'; echo "second: $?"
		bash -c '` + bin + ` lock --as runner-step --pid $$ && cat .runner/lock'; echo "inherited: $?"`
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = root
	got, _ := cmd.CombinedOutput()
	want := "pid=4242 command=runner-loop\n" +
		"runner-step: another runner holds .runner/lock (pid=4242 command=runner-loop); wait for it or stop it\nsecond: 1\n" +
		"pid=4242 command=runner-loop\ninherited: 0\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestEnvDirsHermetic: the git directories runner-step's commands are
// told are the ones their hermetic git has, where a global core.hooksPath
// (command-line scope once hermetic) outranks the repository's; without a
// hermetic environment (runner-loop's) none are told.
func TestEnvDirsHermetic(t *testing.T) {
	root := repo(t)
	os.Unsetenv("TREELOOP_GIT_HERMETIC")
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[core]\n\thooksPath = "+filepath.Join(root, "global-hooks")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	if out, err := exec.Command("git", "-C", root, "config", "core.hooksPath", "local-hooks").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v: %s", err, out)
	}
	code, out, errs := run(t, "env", "--as", "runner-step", "--hermetic", "-C", filepath.Join(root, "sub"))
	if code != 0 || errs != "" {
		t.Fatalf("env: %d %q", code, errs)
	}
	sh := exec.Command("bash", "-c", out+`printf '%s\n' "$RUNNER_STEP_GIT_DIRS"; echo ---; git rev-parse --path-format=absolute --git-common-dir --git-dir --git-path hooks`)
	got, err := sh.CombinedOutput()
	told, byGit, _ := strings.Cut(string(got), "---\n")
	gitDir := filepath.Join(root, ".git")
	want := gitDir + "\n" + gitDir + "\n" + filepath.Join(root, "global-hooks") + "\n"
	if err != nil || told != byGit || told != want {
		t.Errorf("told %q, hermetic git says %q (%v); want %q", told, byGit, err, want)
	}
	os.Unsetenv("TREELOOP_GIT_HERMETIC")
	if _, out, _ := run(t, "env", "--as", "runner-loop", "-C", root); strings.Contains(out, "export RUNNER_STEP_GIT_DIRS") || !strings.Contains(out, "unset RUNNER_STEP_GIT_DIRS\n") {
		t.Errorf("without a hermetic git, the directories were told:\n%s", out)
	}
}

// TestVersion: the porcelain's version line is its name and the
// install's version, the one every command's --version gives.
func TestVersion(t *testing.T) {
	code, out, errs := run(t, "version", "--as", "runner-loop")
	_, own, _ := run(t, "--version")
	if code != 0 || errs != "" || out != "runner-loop "+strings.TrimPrefix(own, "runner-enter ") {
		t.Errorf("version: %d %q %q (runner-enter --version %q)", code, out, errs, own)
	}
}
