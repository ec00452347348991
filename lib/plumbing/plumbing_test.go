package plumbing

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/exit"
)

// TestHeldRunsAgain: a command the signal killed at its very start runs
// again; its output is the run's that ended.
func TestHeldRunsAgain(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "ran")
	var out, errs bytes.Buffer
	code := Held(&out, &errs, "sh", "-c", `if [ ! -e "$0" ]; then : > "$0"; echo early; kill -INT $$; fi; echo ok`, mark)
	if code != 0 || out.String() != "ok\n" {
		t.Fatalf("held: %d %q %q", code, out.String(), errs.String())
	}
	if code := Held(&out, &errs, "sh", "-c", "exit 7"); code != 7 {
		t.Errorf("exit 7: %d", code)
	}
	if code := Held(&out, &errs, filepath.Join(t.TempDir(), "nothing")); code != 127 {
		t.Errorf("a command that cannot start: %d", code)
	}
}

// TestHeldOneStream: given one writer for both, the command's stdout and
// stderr come in the order it wrote them.
func TestHeldOneStream(t *testing.T) {
	var b bytes.Buffer
	if code := Held(&b, &b, "sh", "-c", "echo one; echo two >&2; echo three"); code != 0 || b.String() != "one\ntwo\nthree\n" {
		t.Errorf("one stream: %d %q", code, b.String())
	}
}

// TestJobs: a job's output is kept until it is taken, in the shell's
// $(...) shape; a typed job's value once it ended, and a core's panic
// ends the job as a runner error.
func TestJobs(t *testing.T) {
	j := Spawn(func(stdout, stderr io.Writer) int {
		fmt.Fprint(stdout, "a=1 b=2\n\n")
		fmt.Fprintln(stderr, "warn")
		return 3
	})
	var out, errs bytes.Buffer
	code, text := j.Collect(&out, &errs)
	if code != 3 || text != "a=1 b=2" || out.String() != "a=1 b=2\n" || errs.String() != "warn\n" {
		t.Errorf("collect: %d %q %q %q", code, text, out.String(), errs.String())
	}
	if code, text := Ended(5, "x\n\n", "").Peek(); code != 5 || text != "x" {
		t.Errorf("ended: %d %q", code, text)
	}
	env := &cli.Env{Dir: t.TempDir()}
	typed := Go("iter-log begin", env, func(e *cli.Env) (int, error) {
		e.Warnf("careful")
		return 7, exit.Errorf(exit.Limit, "limit")
	})
	if v := typed.Value(); v != 7 {
		t.Errorf("value: %d", v)
	}
	if code, _ := typed.Collect(nil, &errs); code != exit.Limit || !strings.HasSuffix(errs.String(), "iter-log: warning: careful\niter-log: limit\n") {
		t.Errorf("typed: %d %q", code, errs.String())
	}
	crash := Go("tree-select", env, func(*cli.Env) (string, error) { panic("boom") })
	errs.Reset()
	if code, _ := crash.Collect(nil, &errs); code != exit.RunnerError || crash.Value() != "" || !strings.HasPrefix(errs.String(), "tree-select: internal error: boom") {
		t.Errorf("crash: %d %q", code, errs.String())
	}
}

// TestFacts: shell assignments, quoted, exit last and bare.
func TestFacts(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	f := Facts{"owned": "0", "end_reason": "it's done", "context_failed": "0", "exit": "3"}
	if err := f.Write(int(w.Fd())); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var b bytes.Buffer
	b.ReadFrom(r)
	want := "context_failed='0'\nend_reason='it'\\''s done'\nowned='0'\nexit=3\n"
	if b.String() != want {
		t.Errorf("facts %q, want %q", b.String(), want)
	}
}

// TestSpawnPanic: a job that panics ends as a runner error with the panic
// on its stderr; the program goes on.
func TestSpawnPanic(t *testing.T) {
	j := Spawn(func(stdout, stderr io.Writer) int { panic("boom") })
	var errb strings.Builder
	code, _ := j.Collect(nil, &errb)
	if code != exit.RunnerError || !strings.Contains(errb.String(), "internal error: boom") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
