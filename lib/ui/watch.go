package ui

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/treeloop/treeloop/lib/iterdir"
)

// The watcher (seed 000 §14.3): directories, not files, are watched, since
// the runner replaces its files by rename. It watches .runner, state/,
// iterations/, each run's directory, the iteration directories that may
// still change (those without meta.json, and each run's last one) and
// runs/. A watcher error (an overflowed queue) means "rescan everything":
// the watches are set again and a reset is announced.

type watcher struct {
	s    *Server
	fw   *fsnotify.Watcher
	deb  *debouncer
	done chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	watched map[string]bool
}

func (s *Server) startWatch() (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{s: s, fw: fw, done: make(chan struct{}), watched: map[string]bool{}}
	w.deb = newDebouncer(s.opts.Clock, s.opts.Debounce, s.opts.MaxDelay, func(evs []Event) {
		for _, ev := range evs {
			s.hub.Publish(ev)
		}
	})
	w.scan(false)
	w.wg.Add(1)
	go w.loop()
	return w, nil
}

func (w *watcher) close() {
	close(w.done)
	w.fw.Close()
	w.wg.Wait()
	w.deb.stop()
}

func (w *watcher) add(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[dir] {
		return
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return
	}
	if err := w.fw.Add(dir); err != nil {
		w.s.opts.Logf("watch %s: %v", dir, err)
		return
	}
	w.watched[dir] = true
}

func (w *watcher) remove(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[dir] {
		delete(w.watched, dir)
		w.fw.Remove(dir)
	}
}

// scan sets every watch the current files call for; with announce, new
// iteration directories found are announced.
func (w *watcher) scan(announce bool) {
	rn := w.s.runner
	if _, err := os.Lstat(rn); err != nil {
		// No .runner yet: watch the repository for it to appear.
		w.add(w.s.opts.Root)
		return
	}
	w.remove(w.s.opts.Root)
	w.add(rn)
	w.add(filepath.Join(rn, "state"))
	w.add(filepath.Join(rn, "runs"))
	its := filepath.Join(rn, "iterations")
	w.add(its)
	runs, _ := os.ReadDir(its)
	for _, r := range runs {
		if r.IsDir() && idPattern.MatchString(r.Name()) {
			w.scanRun(filepath.Join(its, r.Name()), announce)
		}
	}
}

// scanRun watches a run directory and its live iteration directories.
func (w *watcher) scanRun(runDir string, announce bool) {
	w.add(runDir)
	ents, _ := os.ReadDir(runDir)
	last := ""
	for _, e := range ents {
		if _, ok := iterNumber(e.Name()); ok && e.IsDir() && e.Name() > last {
			last = e.Name()
		}
	}
	for _, e := range ents {
		if _, ok := iterNumber(e.Name()); !ok || !e.IsDir() {
			continue
		}
		dir := filepath.Join(runDir, e.Name())
		if e.Name() == last || !iterdir.Exists(dir, iterdir.MetaFile) {
			w.mu.Lock()
			known := w.watched[dir]
			w.mu.Unlock()
			w.add(dir)
			if announce && !known {
				w.deb.add(Event{Kind: KindIterationAdded, ID: filepath.Base(runDir) + "/" + e.Name()})
			}
		} else {
			w.remove(dir)
		}
	}
}

func (w *watcher) loop() {
	defer w.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.s.opts.Logf("watcher: %v; rescanning", err)
			w.scan(true)
			w.deb.add(Event{Kind: KindReset})
		}
	}
}

// handle maps one file system event to the UI's events.
func (w *watcher) handle(ev fsnotify.Event) {
	rn := w.s.runner
	rel, err := filepath.Rel(rn, ev.Name)
	if ev.Name == rn || err != nil || strings.HasPrefix(rel, "..") {
		if ev.Name == rn || filepath.Dir(ev.Name) == w.s.opts.Root && filepath.Base(ev.Name) == filepath.Base(rn) {
			w.scan(true)
			w.deb.add(Event{Kind: KindReset})
		}
		return
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	base := parts[len(parts)-1]
	if strings.HasPrefix(base, ".") {
		return // temporary files of atomic writes
	}
	switch {
	case len(parts) == 1:
		w.handleTop(ev, base)
	case parts[0] == "state" && len(parts) == 2:
		switch base {
		case "tree.json":
			w.deb.add(Event{Kind: KindTreeChanged})
		case "run_state.json":
			w.deb.add(Event{Kind: KindRunStateChanged})
		}
	case parts[0] == "runs" && len(parts) == 2:
		if id, ok := strings.CutSuffix(base, ".json"); ok && idPattern.MatchString(id) {
			w.deb.add(Event{Kind: KindRunsChanged, ID: id})
		}
	case parts[0] == "iterations":
		w.handleIterations(ev, parts)
	}
}

// handleTop handles an event on a name directly under .runner/ (base).
func (w *watcher) handleTop(ev fsnotify.Event, base string) {
	switch base {
	case "cancel":
		w.deb.add(Event{Kind: KindRunStateChanged})
	case "state", "iterations", "runs":
		if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Rename) {
			w.scan(true)
			w.deb.add(Event{Kind: KindReset})
		}
	}
}

// handleIterations handles an event under .runner/iterations/: parts is
// the path from .runner/ ("iterations", run, iteration, file), 2 to 4 long.
func (w *watcher) handleIterations(ev fsnotify.Event, parts []string) {
	base := parts[len(parts)-1]
	switch len(parts) {
	case 2:
		if idPattern.MatchString(base) && ev.Has(fsnotify.Create) {
			w.scanRun(ev.Name, true)
		}
	case 3:
		if _, ok := iterNumber(base); !ok {
			return
		}
		id := parts[1] + "/" + base
		if ev.Has(fsnotify.Create) {
			w.scanRun(filepath.Dir(ev.Name), false)
			w.deb.add(Event{Kind: KindIterationAdded, ID: id})
		} else if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			w.remove(ev.Name)
			w.deb.add(Event{Kind: KindIterationChanged, ID: id})
		}
	case 4:
		if _, ok := iterNumber(parts[2]); !ok {
			return
		}
		id := parts[1] + "/" + parts[2]
		switch {
		case base == iterdir.ExecutorLog || base == iterdir.GuardLog || base == iterdir.EventsLog:
			w.deb.add(Event{Kind: KindLogAppended, ID: id, File: base})
		case strings.HasSuffix(base, ".json") || strings.HasSuffix(base, ".log") || base == iterdir.DiffPatch || base == iterdir.PromptFile:
			w.deb.add(Event{Kind: KindIterationChanged, ID: id})
		}
	}
}

// debouncer collects events and hands them over once nothing new came for
// quiet (the trailing edge), or maxDelay after the first pending one, so a
// log written without pause still shows. Equal events merge.
type debouncer struct {
	clock    Clock
	quiet    time.Duration
	maxDelay time.Duration
	flush    func([]Event)

	mu      sync.Mutex
	pending []Event
	first   time.Time
	timer   Timer
	gen     uint64
	stopped bool
}

func newDebouncer(c Clock, quiet, maxDelay time.Duration, flush func([]Event)) *debouncer {
	return &debouncer{clock: c, quiet: quiet, maxDelay: maxDelay, flush: flush}
}

func (d *debouncer) add(ev Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	now := d.clock.Now()
	if len(d.pending) == 0 {
		d.first = now
	}
	dup := false
	for _, p := range d.pending {
		if p == ev {
			dup = true
			break
		}
	}
	if !dup {
		d.pending = append(d.pending, ev)
	}
	wait := min(d.quiet, d.maxDelay-now.Sub(d.first))
	if wait < 0 {
		wait = 0
	}
	if d.timer != nil {
		d.timer.Stop()
	}
	d.gen++
	gen := d.gen
	d.timer = d.clock.AfterFunc(wait, func() { d.fire(gen) })
}

func (d *debouncer) fire(gen uint64) {
	d.mu.Lock()
	if gen != d.gen || d.stopped || len(d.pending) == 0 {
		d.mu.Unlock()
		return
	}
	evs := d.pending
	d.pending = nil
	d.timer = nil
	d.mu.Unlock()
	d.flush(evs)
}

func (d *debouncer) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
}
