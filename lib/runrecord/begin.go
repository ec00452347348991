package runrecord

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/goal"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
)

// Begin opens the record of a runner session, the runner pid on this
// host, in the repository at root (runner-record begin; seed 004 "run
// records"): it first finishes as interrupted any record whose runner is
// gone, re-attaches the record a runner-step run alone left detached
// (pid 0) for the same run, else writes a new one (<run-id>, or
// <run-id>.<n> after a finished one). It returns the record's id, or ""
// when there is none to write: no run started, or .runner/runs/ not
// ignored by git (then warn is told why). Problems met and handled go to
// warn, one line each. Errors: run_state.json or .runner/runs/
// unreadable, the record not written.
func Begin(root string, pid int, warn func(string)) (string, error) {
	rs, err := runstate.Load(filepath.Join(root, layout.RunState))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil // not a treeloop repository (yet): the step says so itself
	}
	if err != nil {
		return "", err
	}
	runID := runstate.Val(rs.RunID)
	if runID == "" {
		return "", nil
	}
	if !runsIgnored(root) {
		warn(fmt.Sprintf("%s/ is not ignored by git: no run record is written (add runs/ to %s, as runner-init does)", layout.Runs, layout.Gitignore))
		return "", nil
	}
	t := Now()
	host, _ := os.Hostname()
	attach, err := settle(root, runID, pid, host, t, warn)
	if err != nil {
		return "", err
	}
	var r Record
	if attach != nil {
		// A re-attached record keeps what the last update refreshed: the
		// repository (the tree, config.toml) is read only for a new
		// record (runner-step run alone re-attaches every step).
		r = *attach
	} else if r, err = newRecord(root, runID, t); err != nil {
		return "", err
	}
	r.Runner = Runner{PID: pid, Host: host}
	r.Branch = layout.BranchPrefix + runID
	r.UpdatedAt = t
	if err := Save(filepath.Join(root, layout.RunRecord(r.ID)), r); err != nil {
		return "", fmt.Errorf("write the run record: %v", fsutil.Cause(err))
	}
	return r.ID, nil
}

// settle finishes the records whose runner is gone (or that waited for a
// step of another run) and returns the one runner pid on host re-attaches,
// if any.
func settle(root, runID string, pid int, host string, t time.Time, warn func(string)) (*Record, error) {
	recs, bad, err := List(filepath.Join(root, layout.Runs))
	if err != nil {
		return nil, fmt.Errorf("read %s: %v", layout.Runs, fsutil.Cause(err))
	}
	for _, e := range bad {
		warn(e.Error())
	}
	var attach *Record
	for i := range recs {
		r := recs[i]
		if r.Status == Interrupted {
			// Effective read it as interrupted: is it still running on disk?
			if disk, err := Load(filepath.Join(root, layout.RunRecord(r.ID))); err == nil && !Finished(disk) {
				// The iteration its runner left, committed by the
				// recovery since, is one it covers.
				if disk.RunID == runID {
					if rp, err := ReadRepo(root); err == nil {
						_ = rp.Refresh(&disk, true)
					}
				}
				Finish(root, &disk, Interrupted, fmt.Sprintf("the runner (pid %d) ended without finishing the run; recovered by the next runner", disk.Runner.PID), t, warn)
			}
			continue
		}
		if Finished(r) {
			continue
		}
		switch {
		case r.Runner.PID == 0 && r.RunID == runID:
			attach = &recs[i]
		case r.Runner.PID == 0:
			Finish(root, &r, Interrupted, "a runner started run "+runID+" while this run waited for its next step", t, warn)
		case r.Runner.PID != pid || r.Runner.Host != host:
			// The lock keeps a second runner out; a live record of
			// another runner here is on another host or a pid reused.
			warn(fmt.Sprintf("run record %s is running under pid %d on %s; leaving it", r.ID, r.Runner.PID, r.Runner.Host))
		default:
			attach = &recs[i]
		}
	}
	return attach, nil
}

// newRecord is a new running record of run runID, read from the
// repository at root.
func newRecord(root, runID string, t time.Time) (Record, error) {
	rp, err := ReadRepo(root)
	if err != nil {
		return Record{}, err
	}
	id := runID
	for n := 2; exists(filepath.Join(root, layout.RunRecord(id))); n++ {
		id = fmt.Sprintf("%s.%d", runID, n)
	}
	r := Record{Version: 1, ID: id, RunID: runID, Status: Running, StartedAt: t, Log: []Entry{}}
	if data, err := fsutil.ReadFile(filepath.Join(root, layout.Goal), root, 1<<20); err == nil {
		if doc, err := goal.Parse(data); err == nil {
			r.GoalTitle = doc.Title()
		}
	}
	if err := rp.Refresh(&r, false); err != nil {
		return Record{}, err
	}
	return r, nil
}

// Finish writes r as finished with status and reason at t, telling warn
// that it did (or why it could not: a record not finished fails nothing).
func Finish(root string, r *Record, status, reason string, t time.Time, warn func(string)) {
	r.Status, r.Reason, r.FinishedAt, r.UpdatedAt = status, reason, &t, t
	if err := Save(filepath.Join(root, layout.RunRecord(r.ID)), *r); err != nil {
		warn(fmt.Sprintf("finalise run record %s: %v", r.ID, fsutil.Cause(err)))
		return
	}
	warn(fmt.Sprintf("run record %s finalised as %s: %s", r.ID, status, reason))
}

// runsIgnored reports whether git ignores the run records (runner-init's
// .runner/.gitignore lists runs/). Without it a record would be committed
// with the next iteration or make the work tree dirty.
func runsIgnored(root string) bool {
	if runnerIgnoresRuns(root) {
		return true
	}
	repo, err := git.Open(root)
	if err != nil {
		return false
	}
	// --no-index: a record is never tracked, so only the ignore rules
	// matter, and git need not read the index (a large one would cost
	// this check more than the rules: bench/fastpaths.md).
	_, err = repo.Run("check-ignore", "-q", "--no-index", layout.RunRecord("x"))
	return err == nil
}

// runnerIgnoresRuns reports, without a git process, that git ignores
// .runner/runs/ by runner-init's own rule: .runner is a directory, runs/
// a directory or absent, and .runner/.gitignore a regular file (git
// follows no symbolic link to a .gitignore) with the line "runs/" or "/runs/" and no negation ("!")
// after it. A .gitignore deeper down cannot re-include what an ignored
// directory holds, and the root's .gitignore, info/exclude and
// core.excludesFile rank below it (gitignore(5)). false means only that
// git must answer.
func runnerIgnoresRuns(root string) bool {
	if st, err := os.Lstat(filepath.Join(root, layout.Runner)); err != nil || !st.IsDir() {
		return false
	}
	// runs/ matches a directory only: a symbolic link (or a file) there is
	// not ignored, and git refuses a path beyond a link.
	if st, err := os.Lstat(filepath.Join(root, layout.Runs)); err == nil && !st.IsDir() || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	p := filepath.Join(root, layout.Gitignore)
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		return false
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	ignored := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "runs/" || line == "/runs/":
			ignored = true
		case strings.HasPrefix(line, "!"):
			ignored = false
		}
	}
	return ignored
}

// exists reports whether p exists (an unreadable p counts as existing).
func exists(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, os.ErrNotExist)
}
