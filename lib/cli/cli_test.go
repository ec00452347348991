package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
)

// truncating maps its file, truncates it and reads past the new end.
type truncating struct {
	File string `arg:""`
}

var sink byte

func (c *truncating) Run(env *Env) error {
	data, release, err := fsutil.MapFile(c.File, "", 0)
	if err != nil {
		return err
	}
	defer release()
	if err := os.Truncate(c.File, 0); err != nil {
		return err
	}
	sink = data[len(data)-1]
	return nil
}

// A mapped input truncated while a command reads it ends the command with
// one line and the runner-error code, not a crash.
func TestRunReportsFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.json")
	if err := os.WriteFile(path, bytes.Repeat([]byte("x"), 2*fsutil.MapThreshold), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run("tree-x", "A test command.", &truncating{}, []string{path}, strings.NewReader(""), &stdout, &stderr)
	if code != exit.RunnerError {
		t.Errorf("exit %d, want %d", code, exit.RunnerError)
	}
	got := stderr.String()
	if !strings.HasPrefix(got, "tree-x: an input file changed while it was being read (fault at 0x") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr = %q, want one line naming the fault", got)
	}
}

// panicking is a command with a bug.
type panicking struct{}

func (panicking) Run(*Env) error {
	var m map[string]int
	m["x"]++ // a nil map: the runtime panics
	return nil
}

// A command that panics ends as a runner error with the panic and its
// stack on stderr: never the runtime's exit 2, which runner-step reads as
// a complete tree.
func TestRunReportsPanic(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Run("tree-x", "A test command.", &panicking{}, nil, strings.NewReader(""), &stdout, &stderr)
	if code != exit.RunnerError {
		t.Errorf("exit %d, want %d", code, exit.RunnerError)
	}
	if got := stderr.String(); !strings.HasPrefix(got, "tree-x: internal error: assignment to entry in nil map\n") || !strings.Contains(got, "goroutine ") {
		t.Errorf("stderr = %q, want the panic and its stack", got)
	}
}
