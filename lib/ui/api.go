package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/treeloop/treeloop/lib/cancel"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/runrecord"
	_ "github.com/treeloop/treeloop/lib/schema/full" // the UI words the schema problems of a run record it cannot read
)

// The API's limits.
const (
	maxTree      = 64 << 20 // tree.json
	maxTailLines = 10000    // ?tail=N
	maxTailBytes = 1 << 20  // what a tail reads at most
	maxEvents    = 2 << 20  // the end of events.jsonl rendered by ?view=compact
	TailDefault  = 120      // the live tail's lines (seed 004)
)

// textFiles are the iteration files served as text, by name.
var textFiles = map[string]bool{
	iterdir.GuardLog: true, iterdir.GuardFirstLog: true, iterdir.ExecutorLog: true, iterdir.PromptFile: true,
	iterdir.DiffPatch: true, iterdir.EventsLog: true, iterdir.AgentErrorLog: true,
	iterdir.RunnerErrorLog: true,
}

// jsonFiles are the iteration records /api/iterations/{run}/{iter} embeds,
// by their key in the answer.
var jsonFiles = []struct{ key, name string }{
	{"begin", iterdir.BeginFile}, {"meta", iterdir.MetaFile}, {"output", iterdir.OutputFile},
	{"agent", iterdir.AgentFile}, {"guard", iterdir.GuardFile}, {"update", iterdir.UpdateFile},
}

// route is a pattern the server answers and its handler.
type route struct {
	pattern string
	handler http.HandlerFunc
}

// routeTable is every route the server answers.
func (s *Server) routeTable() []route {
	allow := func(method, what string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, "method", what)
		}
	}
	t := []route{
		{"GET /api/config", s.handleConfig},
		{"GET /api/tree", s.handleTree},
		{"GET /api/run-state", s.handleRunState},
		{"GET /api/iterations", s.handleIterations},
		{"GET /api/iterations/{run}/{iter}", s.handleIteration},
		{"GET /api/iterations/{run}/{iter}/{file}", s.handleIterFile},
		{"GET /api/nodes/{id}/artifacts", s.handleArtifacts},
		{"GET /api/nodes/{id}/artifacts/{name...}", s.handleArtifact},
		{"GET /api/runs", s.handleRuns},
		{"GET /api/runs/{id}", s.handleRun},
		{"POST /api/cancel", s.handleCancel},
		{"/api/cancel", allow("POST", "POST /api/cancel requests a cancel")},
		{"POST /api/answer", s.handleAnswer},
		{"/api/answer", allow("POST", "POST /api/answer answers a waiting node")},
		{"GET /login", s.handleLogin},
		{"GET /events", s.handleEvents},
		{"/api/", func(w http.ResponseWriter, r *http.Request) {
			writeError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path)
		}},
	}
	if s.assets != nil {
		t = append(t, route{"GET /{$}", s.assets.serveIndex}, route{"GET /assets/{name}", s.assets.serveAsset})
	}
	return t
}

func (s *Server) routes() {
	mux := http.NewServeMux()
	for _, r := range s.routeTable() {
		mux.HandleFunc(r.pattern, r.handler)
	}
	s.mux = mux
}

// Config is /api/config: what the page needs to know about this server.
type Config struct {
	Version     int    `json:"version"`
	Root        string `json:"root"`
	ReadOnly    bool   `json:"read_only"`
	AllowCancel bool   `json:"allow_cancel"`
	AllowAnswer bool   `json:"allow_answer"`
	// SignedIn says whether the request carries the session cookie that
	// the one-time login link gives (auth.go), which a write needs.
	SignedIn  bool `json:"signed_in"`
	TailLines int  `json:"tail_lines"`
}

func (s *Server) handleConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Config{
		Version: 1, Root: s.opts.Root, ReadOnly: !s.opts.AllowCancel && !s.opts.AllowAnswer,
		AllowCancel: s.opts.AllowCancel, AllowAnswer: s.opts.AllowAnswer, SignedIn: s.signedIn(r), TailLines: TailDefault,
	})
}

// root opens .runner for a request, answering the error itself.
func (s *Server) root(w http.ResponseWriter) (*os.Root, bool) {
	root, err := s.openRoot()
	if err != nil {
		if errors.Is(err, errNoRunner) {
			writeError(w, http.StatusNotFound, "no_runner", "no .runner/ in "+s.opts.Root+": run runner-init there")
		} else {
			writeError(w, http.StatusInternalServerError, "io", err.Error())
		}
		return nil, false
	}
	return root, true
}

// fileError answers a failed read of rel.
func fileError(w http.ResponseWriter, rel string, err error) {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		writeError(w, http.StatusNotFound, "not_found", ".runner/"+rel+" does not exist")
	case errors.Is(err, errTooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", ".runner/"+rel+" is too large to serve whole; ask for ?tail=N or a Range")
	case errors.Is(err, errNotFile):
		writeError(w, http.StatusForbidden, "refused", ".runner/"+rel+" is not a regular file")
	case strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes"):
		writeError(w, http.StatusForbidden, "refused", ".runner/"+rel+" leaves .runner/ (a symlink?)")
	default:
		writeError(w, http.StatusInternalServerError, "io", ".runner/"+rel+": "+errString(err))
	}
}

// errString drops the absolute path an *fs.PathError carries.
func errString(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// treeCache keeps the last tree.json read whole and valid, with the stat
// it was read under: a request whose stat matches is served from memory.
type treeCache struct {
	mu   sync.Mutex
	key  statKey
	data []byte
}

type statKey struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func keyOf(st os.FileInfo) statKey {
	return statKey{size: st.Size(), mtime: st.ModTime(), ino: inode(st)}
}

// handleTree serves .runner/state/tree.json as it is on disk (its strings
// without terminal escape sequences, cleanJSON). A read that
// the file changed under (stat before and after differ) or that is not
// valid JSON, as when a writer rewrites the file in place, is retried; if
// it never settles the answer is 503 tree_unreadable, never a torn tree.
func (s *Server) handleTree(w http.ResponseWriter, r *http.Request) {
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	const rel = "state/tree.json"
	var lastErr error
	for try := 0; try < 6; try++ {
		if try > 0 {
			time.Sleep(time.Duration(try*10) * time.Millisecond)
		}
		data, err := s.readTree(root, rel)
		if err == nil {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			w.Write(data)
			return
		}
		if !errors.Is(err, errChanging) {
			fileError(w, rel, err)
			return
		}
		lastErr = err
	}
	writeError(w, http.StatusServiceUnavailable, "tree_unreadable", ".runner/state/tree.json: "+lastErr.Error())
}

var errChanging = errors.New("changed while being read, or not valid JSON (a writer rewriting it in place?)")

func (s *Server) readTree(root *os.Root, rel string) ([]byte, error) {
	f, st, err := openFile(root, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	k := keyOf(st)
	s.tree.mu.Lock()
	if s.tree.data != nil && s.tree.key == k {
		data := s.tree.data
		s.tree.mu.Unlock()
		return data, nil
	}
	s.tree.mu.Unlock()
	data, err := readAll(f, st.Size(), maxTree)
	if err != nil {
		return nil, err
	}
	st2, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if keyOf(st2) != k || int64(len(data)) != st2.Size() || !json.Valid(data) {
		return nil, errChanging
	}
	// A file still being written in place may change after this stat;
	// it is caught by the next request's stat (its mtime moves).
	data = cleanJSON(data)
	s.tree.mu.Lock()
	s.tree.key, s.tree.data = k, data
	s.tree.mu.Unlock()
	return data, nil
}

// RunState is /api/run-state: run_state.json, the iteration running now
// (null between iterations) and whether a cancel is pending.
type RunState struct {
	Version         int             `json:"version"`
	RunState        json.RawMessage `json:"run_state"`
	Running         *IterSummary    `json:"running"`
	CancelRequested bool            `json:"cancel_requested"`
	// Cancel is the pending request: who asked and when; null when none.
	Cancel *cancel.Pending `json:"cancel"`
}

func (s *Server) handleRunState(w http.ResponseWriter, r *http.Request) {
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	out := RunState{Version: 1, RunState: json.RawMessage("null")}
	data, _, err := readFile(root, "state/run_state.json", 1<<20)
	switch {
	case err == nil && json.Valid(data):
		out.RunState = bytes.TrimSpace(data)
	case err == nil:
		writeError(w, http.StatusServiceUnavailable, "run_state_unreadable", ".runner/state/run_state.json is not valid JSON")
		return
	case !errors.Is(err, fs.ErrNotExist):
		fileError(w, "state/run_state.json", err)
		return
	}
	if st, err := root.Lstat("cancel"); err == nil {
		out.CancelRequested = true
		var data []byte
		if st.Mode().IsRegular() {
			data, _, _ = readFile(root, "cancel", 4096)
		}
		out.Cancel = cancel.Parse(data, st.ModTime())
	}
	var rs struct {
		RunID    *string `json:"run_id"`
		NextIter int     `json:"next_iter"`
	}
	if json.Unmarshal(out.RunState, &rs) == nil && rs.RunID != nil && idPattern.MatchString(*rs.RunID) {
		iters, _ := s.iters.list(root, *rs.RunID)
		if n := len(iters); n > 0 && iters[n-1].Running {
			out.Running = &iters[n-1]
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// Iterations is /api/iterations.
type Iterations struct {
	Version    int           `json:"version"`
	Iterations []IterSummary `json:"iterations"`
}

func (s *Server) handleIterations(w http.ResponseWriter, r *http.Request) {
	run := r.URL.Query().Get("run")
	if run != "" && !idPattern.MatchString(run) {
		writeError(w, http.StatusBadRequest, "bad_run", "run must match "+idPattern.String())
		return
	}
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	if id := r.URL.Query().Get("id"); id != "" {
		// One iteration, as an event names it: what a page that holds
		// the list needs after each event, whatever the run's length.
		idRun, it, _ := strings.Cut(id, "/")
		n, ok := iterNumber(it)
		if !idPattern.MatchString(idRun) || !ok || (run != "" && run != idRun) {
			writeError(w, http.StatusBadRequest, "bad_id", "id must be RUN/ITER, as an event's id (run-1/0007)")
			return
		}
		writeJSON(w, http.StatusOK, Iterations{Version: 1, Iterations: s.iters.one(root, idRun, n)})
		return
	}
	list, err := s.iters.list(root, run)
	if err != nil {
		fileError(w, "iterations", err)
		return
	}
	writeJSON(w, http.StatusOK, Iterations{Version: 1, Iterations: list})
}

// iterDir checks the {run} and {iter} path values and returns the
// iteration directory relative to .runner.
func iterDir(w http.ResponseWriter, r *http.Request) (run string, n int, dir string, ok bool) {
	run, it := r.PathValue("run"), r.PathValue("iter")
	if !idPattern.MatchString(run) || !filepath.IsLocal(run) {
		writeError(w, http.StatusBadRequest, "bad_run", "run must match "+idPattern.String())
		return "", 0, "", false
	}
	n, ok = iterNumber(it)
	if !ok {
		writeError(w, http.StatusBadRequest, "bad_iter", "iter must be a positive number of at most 9 digits")
		return "", 0, "", false
	}
	return run, n, path.Join("iterations", run, layout.IterName(n)), true
}

// IterFile describes one text file of an iteration.
type IterFile struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

func (s *Server) handleIteration(w http.ResponseWriter, r *http.Request) {
	run, n, dir, ok := iterDir(w, r)
	if !ok {
		return
	}
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	if st, err := root.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = fs.ErrNotExist
		}
		fileError(w, dir, err)
		return
	}
	out := map[string]any{"version": 1, "run": run, "iter": n}
	for _, f := range jsonFiles {
		var v any = nil
		data, _, err := readFile(root, path.Join(dir, f.name), maxRecord)
		if err == nil && json.Valid(data) {
			v = json.RawMessage(bytes.TrimSpace(data))
		} else if err == nil || errors.Is(err, errTooLarge) {
			v = map[string]string{"error": "unreadable", "message": f.name + " is not valid JSON or larger than 4 MiB"}
		}
		out[f.key] = v
	}
	files := []IterFile{}
	for _, name := range sortedKeys(textFiles) {
		if st, err := root.Lstat(path.Join(dir, name)); err == nil && st.Mode().IsRegular() {
			files = append(files, IterFile{Name: name, Size: st.Size()})
		}
	}
	out["files"] = files
	writeJSON(w, http.StatusOK, out)
}

// handleIterFile serves one text file of an iteration: whole as written
// (streamed, with Range support), or for a person: its last lines
// (?tail=N), the whole file as text (?view=text), or for events.jsonl and
// executor.log the compact view agent-exec prints live (?view=compact),
// each without terminal escape sequences.
func (s *Server) handleIterFile(w http.ResponseWriter, r *http.Request) {
	_, _, dir, ok := iterDir(w, r)
	if !ok {
		return
	}
	name := r.PathValue("file")
	if !textFiles[name] {
		writeError(w, http.StatusNotFound, "not_found", "no such iteration file: "+strconv.Quote(name)+" (want one of "+strings.Join(sortedKeys(textFiles), ", ")+")")
		return
	}
	q := r.URL.Query()
	tail := -1
	if v := q.Get("tail"); v != "" {
		t, err := strconv.Atoi(v)
		if err != nil || t < 0 || t > maxTailLines {
			writeError(w, http.StatusBadRequest, "bad_tail", fmt.Sprintf("tail must be a number of lines from 0 to %d", maxTailLines))
			return
		}
		tail = t
	}
	view := q.Get("view")
	switch {
	case view == "" || view == "text":
	case view == "compact" && (name == iterdir.EventsLog || name == iterdir.ExecutorLog):
	default:
		writeError(w, http.StatusBadRequest, "bad_view", "view is text, or compact for events.jsonl and executor.log")
		return
	}
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	rel := path.Join(dir, name)
	f, st, err := openFile(root, rel)
	if err != nil {
		fileError(w, rel, err)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-File-Size", strconv.FormatInt(st.Size(), 10))
	switch {
	case view == "compact":
		s.serveCompact(w, root, dir, f, st.Size(), tail)
	case tail >= 0:
		data, start, err := tailLines(f, st.Size(), tail, maxTailBytes)
		if err != nil {
			fileError(w, rel, err)
			return
		}
		h.Set("X-Tail-Offset", strconv.FormatInt(start, 10))
		w.Write(clean(data))
	case view == "text":
		serveText(w, f)
	default:
		http.ServeContent(w, r, "", st.ModTime(), f)
	}
}

// Runs is /api/runs: every run record, oldest first; records that do not
// parse are listed in problems.
type Runs struct {
	Version  int                `json:"version"`
	Runs     []runrecord.Record `json:"runs"`
	Problems []string           `json:"problems"`
}

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	out := Runs{Version: 1, Runs: []runrecord.Record{}, Problems: []string{}}
	if st, err := root.Lstat("runs"); err == nil && !st.IsDir() {
		writeError(w, http.StatusForbidden, "refused", ".runner/runs is not a directory")
		return
	}
	recs, bad, err := runrecord.List(filepath.Join(s.runner, "runs"))
	if err != nil {
		fileError(w, "runs", err)
		return
	}
	if recs != nil {
		out.Runs = recs
	}
	for _, b := range bad {
		out.Problems = append(out.Problems, b.Error())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !idPattern.MatchString(id) || !filepath.IsLocal(id) {
		writeError(w, http.StatusBadRequest, "bad_run", "run id must match "+idPattern.String())
		return
	}
	root, ok := s.root(w)
	if !ok {
		return
	}
	defer root.Close()
	rel := path.Join("runs", id+".json")
	data, _, err := readFile(root, rel, 4<<20)
	if err != nil {
		fileError(w, rel, err)
		return
	}
	rec, err := runrecord.Parse(data)
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, "invalid_record", ".runner/"+rel+": "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, runrecord.Effective(rec))
}

// handleCancel writes .runner/cancel (seed 004's cancellation flow,
// DESIGN.md decision 12) when the server was started with AllowCancel and
// the request is the operator's (ownPage).
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	if !s.opts.AllowCancel {
		writeError(w, http.StatusForbidden, "read_only", "this runner-ui is read-only; start it with --allow-cancel to cancel runs")
		return
	}
	if !s.ownPage(w, r, "a cancel") {
		return
	}
	if err := requestCancel(s.opts.Root, "runner-ui"); err != nil {
		if errors.Is(err, errNoRunner) {
			writeError(w, http.StatusNotFound, "no_runner", "no .runner/ in "+s.opts.Root)
			return
		}
		writeError(w, http.StatusInternalServerError, "io", "cannot write .runner/cancel: "+errString(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"version": 1, "cancel": "requested", "path": ".runner/cancel"})
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
