package session

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/stepctx"
)

// runRepo is a repository on runner/r whose base commit (returned) has
// config.toml protecting ci/*.sh, and run-s's first iteration begun on
// it; git runs with the test's own home, and the process's environment
// (which Run makes hermetic) is put back after the test.
func runRepo(t *testing.T) (env *cli.Env, base string) {
	t.Helper()
	dir := t.TempDir()
	environ := os.Environ()
	t.Cleanup(func() {
		os.Clearenv()
		for _, kv := range environ {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	})
	gittest.Setenv(t, dir)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GOENV", "")
	gittest.Run(t, dir, "init", "-q", "-b", "runner/r")
	writeFile(t, filepath.Join(dir, layout.Config), "protected_paths = [\"ci/*.sh\"]\n")
	writeFile(t, filepath.Join(dir, "ci", "check.sh"), "exit 0\n")
	writeFile(t, filepath.Join(dir, ".gitignore"), ".runner/iterations/\n.runner/answers/\n.runner/cancel\n")
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-qm", "base")
	base = gittest.Run(t, dir, "rev-parse", "HEAD")
	iter := filepath.Join(dir, filepath.FromSlash(layout.Iterations), "run-s", "0001")
	if err := os.MkdirAll(iter, 0o755); err != nil {
		t.Fatal(err)
	}
	begin := iterdir.Begin{Version: 1, RunID: "run-s", Iteration: 1, NodeID: "n1", Mode: "execute", HeadBefore: base, Branch: "runner/r",
		StartedAt: time.Now(), Deadline: time.Now().Add(time.Hour)}
	if err := iterdir.Write(iter, iterdir.BeginFile, begin); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(layout.Answers)), 0o755); err != nil {
		t.Fatal(err)
	}
	return &cli.Env{Name: "test", Stdout: io.Discard, Stderr: io.Discard, Dir: dir}, base
}

// runSpec is the spec of a sealed session of iteration 0001, whose steps
// are logged in order into steps.
func runSpec(base string, steps *[]string) Spec {
	return Spec{
		Iter: filepath.Join(filepath.FromSlash(layout.Iterations), "run-s", "0001"), Base: base, Seal: true, Own: []string{"output.json"},
		Who: "the agent", Session: "the agent's session", Fails: "the iteration is an agent error",
		Prepare: func(stepctx.Iteration, *git.Repo) error { *steps = append(*steps, "prepare"); return nil },
		Tell:    func(digest string) { *steps = append(*steps, "tell "+digest) },
		Checks:  func() ([]string, error) { *steps = append(*steps, "checks"); return []string{"own check"}, nil },
	}
}

// Run takes the seal before the session (told its digest, then fn), and
// after it puts back what the session changed and may not: a protected
// path and git's settings, then the command's own checks, then an answer
// the session forged, removed; the reasons come in that order.
func TestRunSequence(t *testing.T) {
	env, base := runRepo(t)
	var steps []string
	out, err := Run(env, runSpec(base, &steps), func(in *cli.Interrupt, it stepctx.Iteration) error {
		steps = append(steps, "session")
		if in.Err() != nil {
			t.Errorf("interrupted before the session: %s", in.Cause())
		}
		writeFile(t, filepath.Join(env.Dir, "ci", "check.sh"), "exit 1\n")
		gittest.Run(t, env.Dir, "config", "core.hooksPath", "/tmp/elsewhere")
		writeFile(t, filepath.Join(env.Dir, filepath.FromSlash(layout.Answers), "n1.1.json"), "{}\n")
		writeFile(t, filepath.Join(it.Dir, "output.json"), "{}\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 || steps[0] != "prepare" || !regexp.MustCompile(`^tell git:[0-9a-f]{64},index:`).MatchString(steps[1]) || steps[2] != "session" || steps[3] != "checks" {
		t.Errorf("steps = %q, want prepare, tell <digest>, session, checks", steps)
	}
	v := out.Violations
	if len(v) != 4 || !strings.Contains(v[0], "git's settings: .git/config") || !strings.Contains(v[1], "ci/check.sh") || v[2] != "own check" ||
		!strings.HasPrefix(v[3], "the agent's session wrote .runner/answers/n1.1.json with no operator's tree-edit answer") {
		t.Errorf("violations = %q", v)
	}
	if data, _ := os.ReadFile(filepath.Join(env.Dir, "ci", "check.sh")); string(data) != "exit 0\n" {
		t.Errorf("ci/check.sh = %q, not put back", data)
	}
	if got := gittest.Run(t, env.Dir, "config", "--default", "", "core.hooksPath"); got != "" {
		t.Errorf("core.hooksPath = %q, not put back", got)
	}
	if _, err := os.Lstat(filepath.Join(env.Dir, filepath.FromSlash(layout.Answers), "n1.1.json")); err == nil {
		t.Error("the forged answer is still queued")
	}
	if out.Verdict.Appeared || !reflect.DeepEqual(out.Verdict.ForgedAnswers, []string{"n1.1.json"}) || out.Iteration.Begin.NodeID != "n1" {
		t.Errorf("outcome = %+v", out)
	}
}

// A cancel file the session creates interrupts it (the context fn is
// given is done, its cause the cancel file) and is the session's own: a
// violation. One that exists before the session interrupts it before it
// begins and is nobody's.
func TestRunCancel(t *testing.T) {
	env, base := runRepo(t)
	var steps []string
	out, err := Run(env, runSpec(base, &steps), func(in *cli.Interrupt, _ stepctx.Iteration) error {
		writeFile(t, filepath.Join(env.Dir, filepath.FromSlash(layout.Cancel)), "by me\n")
		select {
		case <-in.Done():
		case <-time.After(10 * time.Second):
			t.Error("the cancel file did not interrupt the session")
		}
		if in.Cause() != cli.CauseCancelFile {
			t.Errorf("cause = %q", in.Cause())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "the agent's session created .runner/cancel with no operator's request (runner-cancel): it stops the loop, but the iteration is an agent error (an attempt consumed)"
	if out.Verdict.By != cancel.BySession || len(out.Violations) != 2 || out.Violations[1] != want {
		t.Errorf("verdict %+v, violations %q", out.Verdict, out.Violations)
	}

	out, err = Run(env, runSpec(base, &steps), func(in *cli.Interrupt, _ stepctx.Iteration) error {
		if in.Err() == nil || in.Cause() != cli.CauseCancelFile {
			t.Errorf("not interrupted before the session: %v %q", in.Err(), in.Cause())
		}
		return nil
	})
	if err != nil || out.Verdict.Appeared || len(out.Violations) != 1 {
		t.Errorf("a cancel file from before the session: %v, verdict %+v, violations %q", err, out.Verdict, out.Violations)
	}
}

// An error from the session ends it unchecked: Run returns it as it is,
// and nothing is put back.
func TestRunSessionError(t *testing.T) {
	env, base := runRepo(t)
	var steps []string
	failed := errors.New("sandbox: gone")
	_, err := Run(env, runSpec(base, &steps), func(*cli.Interrupt, stepctx.Iteration) error {
		writeFile(t, filepath.Join(env.Dir, "ci", "check.sh"), "exit 1\n")
		return failed
	})
	if err != failed {
		t.Errorf("err = %v, want the session's", err)
	}
	if steps[len(steps)-1] == "checks" {
		t.Errorf("checked after the session's error: %q", steps)
	}
	if data, _ := os.ReadFile(filepath.Join(env.Dir, "ci", "check.sh")); string(data) != "exit 1\n" {
		t.Errorf("ci/check.sh = %q: checked", data)
	}
}
