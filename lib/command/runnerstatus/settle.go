package runnerstatus

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runlock"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/worktree"
)

// The bounds of reading the state again while a runner rewrites it: at
// most settleReads reads in all, none after settleWait.
const (
	settleReads = 8
	settleWait  = 3 * time.Second
)

// settling is called once the watch on .runner/state/ is set and a read
// after it failed (tests wait on it); nil in the command.
var settling func()

// readRepo is runrecord.ReadRepo for a repository a runner may be
// working in. The runner rewrites the state as it goes (a tree renamed
// in, restored by git, caught between two states), so while .runner/lock
// is held a read that fails is made again each time .runner/state/
// changes, at most settleReads times within settleWait, before the
// failure is told, as the state of a live run, not of a repository to
// set up. With no runner working, a failure is told at once.
func readRepo(root string) (*runrecord.Repo, error) {
	rp, err := runrecord.ReadRepo(root)
	lock := filepath.Join(root, layout.Lock)
	if err == nil || !worktree.Locked(lock) {
		return rp, err
	}
	w, werr := fsnotify.NewWatcher()
	if werr != nil {
		return nil, live(err, lock)
	}
	defer w.Close()
	if werr := w.Add(filepath.Join(root, layout.State)); werr != nil {
		return nil, live(err, lock)
	}
	deadline := time.NewTimer(settleWait)
	defer deadline.Stop()
	// The first read again once the watch is set: a change between the
	// first read and the watch is not missed.
	for reads := 1; reads < settleReads; reads++ {
		if rp, err = runrecord.ReadRepo(root); err == nil {
			return rp, nil
		}
		if reads == 1 && settling != nil {
			settling()
		}
		select {
		case <-w.Events:
		case <-w.Errors:
		case <-deadline.C:
			return nil, live(err, lock)
		}
	}
	if rp, err = runrecord.ReadRepo(root); err == nil {
		return rp, nil
	}
	return nil, live(err, lock)
}

// live is err, a read of the state of a run a runner works on, as the
// state being rewritten: runner-init is not the advice.
func live(err error, lock string) error {
	if !worktree.Locked(lock) {
		return err
	}
	who := ""
	if h := runlock.Holder(lock); h != "" {
		who = " (" + h + ")"
	}
	return fmt.Errorf("%s, while a runner works here%s and rewrites it: run runner-status again", strings.TrimSuffix(err.Error(), runrecord.InitAdvice), who)
}
