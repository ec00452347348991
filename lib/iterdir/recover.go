package iterdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runstate"
)

// Recovery actions (iter-log recover, the start of every step), in the
// order a step does them: update (tree-update --outcome interrupted), then
// end (iter-log end), then commit (loop-commit).
const (
	RecoverNone      = "none"
	RecoverCommit    = "commit"
	RecoverEnd       = "end"
	RecoverUpdate    = "update"
	RecoverDiscarded = "discarded"
)

// Recovery is what completes the run's last iteration a crash or kill
// left unfinished: Action (one of the Recover constants), Dir (the
// iteration's directory relative to the repository's root; the directory
// set aside for discarded) and Selected (its node). Warning, when not
// empty, is a problem met and handled (an unreadable meta.json, which
// iter-log end rewrites).
type Recovery struct {
	Action, Dir, Selected, Warning string
}

// String is the line iter-log recover prints: action=<a> [dir=<path>]
// [selected=<id>].
func (r Recovery) String() string {
	s := "action=" + r.Action
	if r.Dir != "" {
		s += " dir=" + r.Dir
	}
	if r.Selected != "" {
		s += " selected=" + r.Selected
	}
	return s
}

// Recover diagnoses the last iteration of the run started in the
// repository at root (seed 002 "crash recovery"): none when it was
// committed (or there is none), commit when meta.json is written but the
// commit is missing, end when the tree was updated but the log not
// closed, update when it stopped before tree-update, discarded when it
// stopped before begin.json (the directory, in which nothing ran, is
// renamed to <iter>.aborted[-k], never reused). Errors: run_state.json
// unreadable, the run's directory unreadable, the rename refused.
func Recover(root string) (Recovery, error) {
	rs, err := runstate.Load(filepath.Join(root, layout.RunState))
	if err != nil {
		return Recovery{}, err
	}
	runID := runstate.Val(rs.RunID)
	if runID == "" {
		return Recovery{Action: RecoverNone}, nil
	}
	runDir := filepath.Join(root, layout.Iterations, runID)
	// The run's directory is listed, names only: what a crash left may lie
	// anywhere above run_state.json's next_iter, which the sessions of an
	// unconfined run can reach.
	entries, err := os.ReadDir(runDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return Recovery{}, fmt.Errorf("read %s: %v", rel(root, runDir), fsutil.Cause(err))
	}
	last, lastName := 0, ""
	for _, e := range entries {
		if n, ok := iterNumber(e.Name()); ok && e.IsDir() && n > last {
			last, lastName = n, e.Name()
		}
	}
	if last == 0 {
		return Recovery{Action: RecoverNone}, nil
	}
	dir := filepath.Join(runDir, lastName)
	var r Recovery
	var m Meta
	switch err := Read(dir, MetaFile, &m); {
	case err == nil && m.Commit != "":
		return Recovery{Action: RecoverNone}, nil
	case err == nil:
		return Recovery{Action: RecoverCommit, Dir: rel(root, dir), Selected: m.NodeID}, nil
	case !errors.Is(err, os.ErrNotExist):
		// A torn meta.json cannot happen (atomic writes); an unreadable
		// one is rewritten by iter-log end.
		r.Warning = fmt.Sprintf("%s: %v; rewriting it", MetaFile, err)
	}
	var begin Begin
	if err := Read(dir, BeginFile, &begin); err != nil {
		// Killed between allocating the directory and recording the
		// start: nothing ran. Set the directory aside.
		aside := dir + ".aborted"
		for k := 2; ; k++ {
			if _, err := os.Lstat(aside); errors.Is(err, os.ErrNotExist) {
				break
			}
			aside = fmt.Sprintf("%s.aborted-%d", dir, k)
		}
		if err := os.Rename(dir, aside); err != nil {
			return Recovery{}, fmt.Errorf("set aside %s: %v", rel(root, dir), fsutil.Cause(err))
		}
		r.Action, r.Dir = RecoverDiscarded, rel(root, aside)
		return r, nil
	}
	r.Action, r.Dir, r.Selected = RecoverUpdate, rel(root, dir), begin.NodeID
	if Exists(dir, UpdateFile) {
		r.Action = RecoverEnd
	}
	return r, nil
}

// rel is p relative to root, with slashes (p itself when outside it).
func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// iterNumber parses an iteration directory's name ("0007"): at least four
// digits, a number from 1 to 10^8.
func iterNumber(name string) (int, bool) {
	if len(name) < 4 {
		return 0, false
	}
	n := 0
	for _, c := range name {
		if c < '0' || c > '9' || n > 1e8 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n > 0
}
