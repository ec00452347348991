package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// The guard baseline's files in the run's iterations directory
// (.runner/iterations/<run-id>/).
const (
	BaselineFile = "baseline.json"
	BaselineLog  = "baseline.log"
)

// Baseline runs the guard once before a run's first iteration
// ("Guard baseline"; runner-start does) and records whether the repository
// starts green in baseline.json, with the output in baseline.log. With
// [guard] ratchet the passing-test count of a green start is in the
// record. Errors: the files cannot be written (a runner error), or the
// baseline was interrupted (130/143).
func Baseline(env *cli.Env, runID string, cfg config.Config) (iterdir.Guard, error) {
	dir := filepath.Join(env.Dir, layout.Iterations, runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return iterdir.Guard{}, exit.Errorf(exit.RunnerError, "guard baseline: %v", fsutil.Cause(err))
	}
	in := cli.NotifyInterrupt()
	defer in.Stop()
	rec, code := Guard(in, env, cfg, time.Now().Add(cfg.IterationTimeout()), filepath.Join(dir, BaselineLog), Best{})
	if err := iterdir.Write(dir, BaselineFile, rec); err != nil {
		return rec, exit.Errorf(exit.RunnerError, "write %s: %v", BaselineFile, fsutil.Cause(err))
	}
	if rec.Outcome == Interrupted {
		return rec, exit.Errorf(code, "guard baseline: %s", rec.Message)
	}
	return rec, nil
}

// ReadBaseline reads run runID's baseline.json in root; ok is false when
// the run has none.
func ReadBaseline(root, runID string) (rec iterdir.Guard, ok bool, err error) {
	err = iterdir.Read(filepath.Join(root, layout.Iterations, runID), BaselineFile, &rec)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, false, nil
	}
	return rec, err == nil, err
}

// RedStart is the note for a run whose baseline was not green, naming
// the log; "" for a green one.
func RedStart(runID string, rec iterdir.Guard) string {
	if rec.Outcome == Pass {
		return ""
	}
	return fmt.Sprintf("The guard was already failing when this run started (its baseline at runner-start: %s; output in %s/%s/%s). Failures it shows may have been there before this node: do not take them for yours, but the node passes only on a green guard.",
		baselineWhat(rec), layout.Iterations, runID, BaselineLog)
}

func baselineWhat(rec iterdir.Guard) string {
	if rec.Message != "" {
		return rec.Message
	}
	return rec.Outcome
}

// CheckBaseline runs the guard of the repository at env.Dir once, as
// runner-check --guard does, and returns the problems: the guard could
// not run, or the repository does not start green (the first node would
// inherit its failures). Its output goes to a temporary file, removed
// afterwards; the tail of a failure is not repeated here.
func CheckBaseline(env *cli.Env, cfg config.Config) []string {
	f, err := os.CreateTemp("", "treeloop-guard-*.log")
	if err != nil {
		return []string{fmt.Sprintf("guard: cannot create a log file: %v", err)}
	}
	f.Close()
	defer os.Remove(f.Name())
	in := cli.NotifyInterrupt()
	defer in.Stop()
	rec, _ := Guard(in, env, cfg, time.Now().Add(cfg.IterationTimeout()), f.Name(), Best{})
	switch rec.Outcome {
	case Pass:
		return nil
	case Fail:
		return []string{fmt.Sprintf("guard: the repository does not start green (%s): the first node would inherit the failures; fix them or start anyway (runner-start records a red baseline)", rec.Message)}
	default:
		return []string{"guard: " + rec.Message}
	}
}
