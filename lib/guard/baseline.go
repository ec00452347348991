package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/ratchet"
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
// record; with [guard] results the tests that passed are written to
// layout.TestsPassed (PASS_TO_PASS from the run's start), and with private
// caches their digest to layout.GuardCache, for the bootstrap commit.
// Errors: the files cannot be written (a runner error), or the baseline
// was interrupted (130/143).
func Baseline(env *cli.Env, runID string, cfg config.Config) (iterdir.Guard, error) {
	dir := filepath.Join(env.Dir, layout.Iterations, runID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return iterdir.Guard{}, exit.Errorf(exit.RunnerError, "guard baseline: %v", fsutil.Cause(err))
	}
	j, err := judgingAtHead(env.Dir, cfg, filepath.Join(dir, BaselineResults))
	if err != nil {
		return iterdir.Guard{}, exit.Errorf(exit.RunnerError, "guard baseline: %v", err)
	}
	in := cli.NotifyInterrupt()
	defer in.Stop()
	rec, code := Guard(in, env, cfg, time.Now().Add(cfg.IterationTimeout()), filepath.Join(dir, BaselineLog), j)
	if err := iterdir.Write(dir, BaselineFile, rec); err != nil {
		return rec, exit.Errorf(exit.RunnerError, "write %s: %v", BaselineFile, fsutil.Cause(err))
	}
	if rec.Outcome == Interrupted {
		return rec, exit.Errorf(code, "guard baseline: %s", rec.Message)
	}
	if err := Record(env.Dir, runID, rec, j.Caches, true); err != nil {
		return rec, exit.Errorf(exit.RunnerError, "guard baseline: %v", err)
	}
	return rec, nil
}

// BaselineResults is the baseline's results directory, in the run's
// iterations directory.
const BaselineResults = "baseline-results"

// judgingAtHead is what a guard run outside an iteration (the baseline,
// runner-check) is judged by: its results in resultsDir when [guard]
// results is on, the private caches checked against the digest HEAD
// records, the work tree's ignored paths for the build outputs to remove
// (no caches outside a repository).
func judgingAtHead(root string, cfg config.Config, resultsDir string) (Judging, error) {
	var j Judging
	if cfg.Guard.EvidenceOn() {
		j.Results = resultsDir
	}
	if cfg.Guard.Caches != config.CachesPrivate {
		return j, nil
	}
	repo, dirs, err := git.OpenDirs(root)
	if err != nil {
		return j, nil // no repository: nothing of a session's to keep out
	}
	c := evidence.CachesFor(dirs.Git)
	j.Caches = &c
	if data, ok, err := repo.ShowFile("HEAD", layout.GuardCache); err == nil && ok {
		j.CacheDigest = ParseCacheDigest(data)
	}
	if j.Ignored, err = repo.Ignored(); err != nil {
		return j, err
	}
	return j, nil
}

// Record keeps what a pass (or, with baseline, the run's baseline, green
// or not) leaves for the next guard, in the runner-owned files the
// iteration or bootstrap commit carries: the tests that passed
// (layout.TestsPassed, PASS_TO_PASS) and the private caches' digest
// (layout.GuardCache). Nothing for a guard without tests by name or
// private caches. Errors: a file cannot be written.
func Record(root, runID string, rec iterdir.Guard, caches *evidence.Caches, baseline bool) error {
	if ev := rec.Evidence; ev != nil && (ev.Held || baseline && ev.Sources != nil) {
		if err := fsutil.WriteAtomic(filepath.Join(root, layout.TestsPassed), ratchet.FormatNames(runID, ev.PassedNames), 0o644); err != nil {
			return fmt.Errorf("write %s: %v", layout.TestsPassed, fsutil.Cause(err))
		}
	}
	if caches == nil {
		return nil
	}
	digest, err := caches.Digest()
	if err != nil {
		return fmt.Errorf("the guard's caches: %v", err)
	}
	if err := fsutil.WriteAtomic(filepath.Join(root, layout.GuardCache), []byte(cacheHeader+digest+"\n"), 0o644); err != nil {
		return fmt.Errorf("write %s: %v", layout.GuardCache, fsutil.Cause(err))
	}
	return nil
}

// cacheHeader starts layout.GuardCache.
const cacheHeader = "# treeloop: the guard's private caches after its last run\n"

// ParseCacheDigest reads layout.GuardCache's digest ("" when the bytes
// are not such a file).
func ParseCacheDigest(data []byte) string {
	d, ok := strings.CutPrefix(string(data), cacheHeader)
	if !ok {
		return ""
	}
	return strings.TrimSpace(d)
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
// the log; "" for a green one, and for one whose guard could not run
// (runner-start refuses such a start: a record left of it says nothing
// of the code the node inherits).
func RedStart(runID string, rec iterdir.Guard) string {
	if rec.Outcome == Pass || rec.Outcome == Error {
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
	results, err := os.MkdirTemp("", "treeloop-results-*")
	if err != nil {
		return []string{fmt.Sprintf("guard: cannot create a results directory: %v", err)}
	}
	defer os.RemoveAll(results)
	j, err := judgingAtHead(env.Dir, cfg, results)
	if err != nil {
		return []string{fmt.Sprintf("guard: %v", err)}
	}
	rec, _ := Guard(in, env, cfg, time.Now().Add(cfg.IterationTimeout()), f.Name(), j)
	switch rec.Outcome {
	case Pass:
		return nil
	case Fail:
		return []string{fmt.Sprintf("guard: the repository does not start green (%s): the first node would inherit the failures; fix them or start anyway (runner-start records a red baseline)", rec.Message)}
	default:
		return []string{"guard: " + rec.Message}
	}
}
