package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/tree"
)

func TestTree(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	r := get(t, s.url+"/api/tree")
	want, _ := os.ReadFile(filepath.Join(dir, ".runner/state/tree.json"))
	if r.code != 200 || r.body != string(want) || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("tree: %d %q", r.code, r.body)
	}
	// Changed on disk: the next answer is the new tree, not the cached one.
	if err := fsutil.WriteAtomic(filepath.Join(dir, ".runner/state/tree.json"), tree.Encode(testTree("Second")), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := get(t, s.url+"/api/tree"); !strings.Contains(r.body, `"title": "Second"`) {
		t.Fatalf("tree after a rewrite: %s", r.body)
	}
	os.Remove(filepath.Join(dir, ".runner/state/tree.json"))
	wantError(t, get(t, s.url+"/api/tree"), 404, "not_found")
}

func TestNoRunnerDirectory(t *testing.T) {
	s := start(t, Options{Root: t.TempDir()})
	for _, p := range []string{"/api/tree", "/api/run-state", "/api/iterations", "/api/runs", "/api/iterations/r/1"} {
		wantError(t, get(t, s.url+p), 404, "no_runner")
	}
}

// A writer that rewrites tree.json in place (truncate, then write) while
// the UI reads it: every answer is one whole version or a 503, never a
// torn document.
func TestTreeRewrittenMidRead(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	big := func(title string) []byte {
		root := testTree(title)
		for i := range 1000 {
			root.Children = append(root.Children, &tree.Node{ID: "n" + strconv.Itoa(i), Order: int64(10 + i), Title: strings.Repeat("x", 40),
				Goal: "g", Acceptance: []string{}, Next: "execute", MaxAttempts: 3, Children: []*tree.Node{}})
		}
		return tree.Encode(root)
	}
	versions := [][]byte{big("A"), big("B")}
	path := filepath.Join(dir, ".runner/state/tree.json")
	if err := os.WriteFile(path, versions[0], 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var writes atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	// The writer stops before the fixture's directory goes, however the
	// test ends (a failed get ends it with the writer still at work).
	stopWriter := sync.OnceFunc(func() {
		close(stop)
		wg.Wait()
	})
	t.Cleanup(stopWriter)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				t.Error(err)
				return
			}
			v := versions[i%2]
			// Two writes with a pause between: a reader may see half.
			f.Write(v[:len(v)/2])
			time.Sleep(time.Millisecond)
			f.Write(v[len(v)/2:])
			f.Close()
			writes.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	reads := 150
	if testing.Short() {
		reads = 50 // the ci tier (just ci) reads 150 times
	}
	ok, unavailable := 0, 0
	for i := 0; i < reads; i++ {
		r := get(t, s.url+"/api/tree")
		switch {
		case r.code == 200 && (r.body == string(versions[0]) || r.body == string(versions[1])):
			ok++
		case r.code == 503:
			wantError(t, r, 503, "tree_unreadable")
			unavailable++
		default:
			t.Fatalf("answer %d: %d, %d bytes, neither version", i, r.code, len(r.body))
		}
	}
	stopWriter()
	if ok == 0 || writes.Load() < 10 {
		t.Fatalf("%d whole answers, %d unavailable, %d writes: the test did not exercise the race", ok, unavailable, writes.Load())
	}
	t.Logf("%d whole answers, %d unavailable, over %d rewrites", ok, unavailable, writes.Load())
}

func TestRunState(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	rs := decode[RunState](t, get(t, s.url+"/api/run-state"))
	if !strings.Contains(string(rs.RunState), `"run_id":"run-a"`) || rs.CancelRequested {
		t.Fatalf("run state: %+v", rs)
	}
	if rs.Running == nil || rs.Running.Iter != 2 || rs.Running.NodeID != "b" || rs.Running.Status != "running" {
		t.Fatalf("running: %+v", rs.Running)
	}
	writeText(t, filepath.Join(dir, ".runner/cancel"), "")
	if rs := decode[RunState](t, get(t, s.url+"/api/run-state")); !rs.CancelRequested || rs.Cancel == nil || rs.Cancel.By != "" {
		t.Fatalf("cancel file not reported: %+v", rs.Cancel)
	}
	writeText(t, filepath.Join(dir, ".runner/cancel"), "by=\"ops\" pid=12 at=2026-01-02T03:04:05Z\n")
	if c := decode[RunState](t, get(t, s.url+"/api/run-state")).Cancel; c == nil || c.By != "ops" || c.PID != 12 || c.At.Format(time.RFC3339) != "2026-01-02T03:04:05Z" {
		t.Fatalf("who asked and when: %+v", c)
	}
	writeText(t, filepath.Join(dir, ".runner/state/run_state.json"), `{"run_id": `)
	wantError(t, get(t, s.url+"/api/run-state"), 503, "run_state_unreadable")
	os.Remove(filepath.Join(dir, ".runner/state/run_state.json"))
	if rs := decode[RunState](t, get(t, s.url+"/api/run-state")); string(rs.RunState) != "null" || rs.Running != nil {
		t.Fatalf("no run state: %+v", rs)
	}
}

func TestIterations(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	its := decode[Iterations](t, get(t, s.url+"/api/iterations")).Iterations
	if len(its) != 2 {
		t.Fatalf("want 2 iterations (set-aside and unbegun directories left out), got %+v", its)
	}
	a, b := its[0], its[1]
	if a.Iter != 1 || a.Status != "done" || a.Result != "passed" || a.Guard != "pass" || a.Running ||
		a.Tokens != (Tokens{1200, 300, 50}) || a.CostUSD != 0.25 || a.DurationMS != 90000 || a.EndedAt == nil {
		t.Fatalf("iteration 1: %+v", a)
	}
	if b.Iter != 2 || b.Status != "running" || !b.Running || b.NodeID != "b" || b.EndedAt != nil {
		t.Fatalf("iteration 2: %+v", b)
	}
	// meta.json appears: the summary follows (the cache is revalidated).
	writeJSONFile(t, filepath.Join(dir, ".runner/iterations/run-a/0002/meta.json"), map[string]any{
		"version": 1, "run_id": "run-a", "iteration": 2, "node_id": "b", "status": "retry", "result": "failed", "guard": "fail",
		"started_at": t0.Add(2 * time.Minute),
	})
	its = decode[Iterations](t, get(t, s.url+"/api/iterations")).Iterations
	if its[1].Status != "retry" || its[1].Running || its[1].Guard != "fail" {
		t.Fatalf("iteration 2 after meta.json: %+v", its[1])
	}
	if its := decode[Iterations](t, get(t, s.url+"/api/iterations?run=other")).Iterations; len(its) != 0 {
		t.Fatalf("run filter: %+v", its)
	}
	if r := get(t, s.url+"/api/iterations?run=other"); !strings.Contains(r.body, `"iterations":[]`) {
		t.Fatalf("an empty list is []: %s", r.body)
	}
	wantError(t, get(t, s.url+"/api/iterations?run=../x"), 400, "bad_run")
}

// TestIterationByID: ?id=RUN/ITER gives one row, the row the whole list
// has for it, running or not, as an event names it ("run-a/0002") or not;
// none for an iteration that has not begun; a bad id is refused.
func TestIterationByID(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	same := func() {
		t.Helper()
		all := decode[Iterations](t, get(t, s.url+"/api/iterations")).Iterations
		for _, want := range all {
			for _, id := range []string{fmt.Sprintf("%s/%04d", want.Run, want.Iter), fmt.Sprintf("%s/%d", want.Run, want.Iter)} {
				got := decode[Iterations](t, get(t, s.url+"/api/iterations?id="+id)).Iterations
				if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
					t.Fatalf("?id=%s = %+v, the list has %+v", id, got, want)
				}
			}
		}
	}
	same() // iteration 2 running
	if err := os.MkdirAll(filepath.Join(dir, ".runner/iterations/run-a/0003"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSONFile(t, filepath.Join(dir, ".runner/iterations/run-a/0003/begin.json"), map[string]any{
		"version": 1, "run_id": "run-a", "iteration": 3, "node_id": "c", "started_at": t0.Add(3 * time.Minute),
	})
	same() // iteration 2 unfinished, 3 running
	if got := decode[Iterations](t, get(t, s.url+"/api/iterations?id=run-a/0002")).Iterations; len(got) != 1 || got[0].Status != "unfinished" || got[0].Running {
		t.Fatalf("an open iteration with a later one begun: %+v", got)
	}
	if got := decode[Iterations](t, get(t, s.url+"/api/iterations?id=run-a/0009")).Iterations; len(got) != 0 {
		t.Fatalf("an iteration that has not begun: %+v", got)
	}
	for _, bad := range []string{"run-a", "../x/1", "run-a/x", "run-a/0"} {
		wantError(t, get(t, s.url+"/api/iterations?id="+bad), 400, "bad_id")
	}
	wantError(t, get(t, s.url+"/api/iterations?run=other&id=run-a/1"), 400, "bad_id")
}

func TestIteration(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	type detail struct {
		Run    string
		Iter   int
		Meta   map[string]any
		Begin  map[string]any
		Output map[string]any
		Agent  map[string]any
		Guard  any
		Files  []IterFile
	}
	d := decode[detail](t, get(t, s.url+"/api/iterations/run-a/1"))
	if d.Run != "run-a" || d.Iter != 1 || d.Meta["result"] != "passed" || d.Begin["node_id"] != "a" || d.Output["summary"] != "did a" ||
		d.Agent["backend"] != "claude" || d.Guard.(map[string]any)["evidence"].(map[string]any)["reads"] != "witnessed" {
		t.Fatalf("detail: %+v", d)
	}
	names := []string{}
	for _, f := range d.Files {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "diff.patch,events.jsonl,executor.log,guard.log,prompt.md" || d.Files[3].Size != int64(len("line 1\nline 2\nline 3\nguard ok\n")) {
		t.Fatalf("files: %+v", d.Files)
	}
	// The same iteration by its directory's name.
	if r := get(t, s.url+"/api/iterations/run-a/0001"); r.code != 200 {
		t.Fatalf("0001: %d", r.code)
	}
	// An output that is not JSON is reported, not passed through.
	writeText(t, filepath.Join(dir, ".runner/iterations/run-a/0001/output.json"), "not json")
	if r := get(t, s.url+"/api/iterations/run-a/1"); !strings.Contains(r.body, `"output":{"error":"unreadable"`) {
		t.Fatalf("bad output.json: %s", r.body)
	}
	wantError(t, get(t, s.url+"/api/iterations/run-a/7"), 404, "not_found")
	wantError(t, get(t, s.url+"/api/iterations/run-b/1"), 404, "not_found")
	wantError(t, get(t, s.url+"/api/iterations/run-a/0"), 400, "bad_iter")
	wantError(t, get(t, s.url+"/api/iterations/run-a/x1"), 400, "bad_iter")
	wantError(t, get(t, s.url+"/api/iterations/run-a/1234567890"), 400, "bad_iter")
}

func TestIterationFiles(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	base := s.url + "/api/iterations/run-a/1/"
	r := get(t, base+"guard.log")
	if r.code != 200 || r.body != "line 1\nline 2\nline 3\nguard ok\n" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("whole: %d %q %v", r.code, r.body, r.header)
	}
	r = get(t, base+"guard.log?tail=2")
	if r.body != "line 3\nguard ok\n" || r.header.Get("X-Tail-Offset") != "14" || r.header.Get("X-File-Size") != "30" {
		t.Fatalf("tail=2: %q %v", r.body, r.header)
	}
	if r := get(t, base+"guard.log?tail=0"); r.code != 200 || r.body != "" {
		t.Fatalf("tail=0: %q", r.body)
	}
	r = get(t, base+"guard.log", "Range", "bytes=7-12")
	if r.code != 206 || r.body != "line 2" {
		t.Fatalf("range: %d %q", r.code, r.body)
	}
	r = get(t, base+"events.jsonl?view=compact")
	if r.body != "claude: tool Bash: make test\nclaude: says: All done.\n" {
		t.Fatalf("compact events: %q", r.body)
	}
	if r := get(t, base+"events.jsonl?view=compact&tail=1"); r.body != "claude: says: All done.\n" {
		t.Fatalf("compact events, tail=1: %q", r.body)
	}
	wantError(t, get(t, base+"guard.log?view=compact"), 400, "bad_view")
	wantError(t, get(t, base+"guard.log?tail=-1"), 400, "bad_tail")
	wantError(t, get(t, base+"guard.log?tail=10001"), 400, "bad_tail")
	wantError(t, get(t, base+"guard.log?tail=x"), 400, "bad_tail")
	wantError(t, get(t, base+"meta.json"), 404, "not_found")
	wantError(t, get(t, base+"agent_error.log"), 404, "not_found")
	wantError(t, get(t, s.url+"/api/iterations/run-a/2/guard.log"), 404, "not_found")
}

// A large log is served in bounded pieces: a tail reads at most 1 MiB.
func TestTailBounded(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	line := strings.Repeat("y", 1023) + "\n"
	writeText(t, filepath.Join(dir, ".runner/iterations/run-a/0001/executor.log"), strings.Repeat(line, 3*1024))
	r := get(t, s.url+"/api/iterations/run-a/1/executor.log?tail=10000")
	if len(r.body) != maxTailBytes || r.header.Get("X-Tail-Offset") != strconv.Itoa(3<<20-maxTailBytes) {
		t.Fatalf("tail of 3 MiB: %d bytes from %s", len(r.body), r.header.Get("X-Tail-Offset"))
	}
}

func TestTailLines(t *testing.T) {
	for _, c := range []struct {
		text  string
		n     int
		max   int64
		want  string
		start int64
	}{
		{"a\nb\nc\n", 2, 100, "b\nc\n", 2},
		{"a\nb\nc", 2, 100, "b\nc", 2},
		{"a\nb\nc\n", 5, 100, "a\nb\nc\n", 0},
		{"a\nb\nc\n", 1, 100, "c\n", 4},
		{"", 3, 100, "", 0},
		{"\n\n\n", 2, 100, "\n\n", 1},
		{"aaaa\nbbbb\n", 2, 6, "\nbbbb\n", 4},
	} {
		got, start, err := tailLines(strings.NewReader(c.text), int64(len(c.text)), c.n, c.max)
		if err != nil || string(got) != c.want || start != c.start {
			t.Errorf("tailLines(%q, %d, %d) = %q, %d, %v; want %q, %d", c.text, c.n, c.max, got, start, err, c.want, c.start)
		}
	}
	// Across chunk boundaries.
	var b strings.Builder
	for i := range 50000 {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	text := b.String()
	got, _, _ := tailLines(strings.NewReader(text), int64(len(text)), 20000, 1<<20)
	if !strings.HasPrefix(string(got), "30000\n") || !strings.HasSuffix(string(got), "49999\n") || strings.Count(string(got), "\n") != 20000 {
		t.Fatalf("20000 lines across chunks: %d lines", strings.Count(string(got), "\n"))
	}
}

// Requests for anything outside .runner/, by "..", by an encoded path or
// through a symlink, are refused; so are files that are not regular.
func TestRefusals(t *testing.T) {
	dir := fixture(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	writeText(t, outside, "SECRET\n")
	it := filepath.Join(dir, ".runner/iterations/run-a/0001")
	os.Remove(filepath.Join(it, "guard.log"))
	if err := os.Symlink(outside, filepath.Join(it, "guard.log")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(it, "prompt.md"))
	if err := os.Symlink("../../../GOAL.md", filepath.Join(it, "prompt.md")); err != nil {
		t.Fatal(err)
	}
	writeText(t, filepath.Join(dir, ".runner/GOAL.md"), "inside .runner\n")
	// A run directory that is a symlink leaving .runner.
	other := t.TempDir()
	writeText(t, filepath.Join(other, "0001", "guard.log"), "SECRET\n")
	writeJSONFile(t, filepath.Join(other, "0001", "begin.json"), map[string]any{"node_id": "x"})
	if err := os.Symlink(other, filepath.Join(dir, ".runner/iterations/run-out")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(it, "diff.patch"))
	if err := syscall.Mkfifo(filepath.Join(it, "diff.patch"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Root: dir})
	check := func(path string, code int, kind string) {
		t.Helper()
		r := get(t, s.url+path)
		if strings.Contains(r.body, "SECRET") {
			t.Fatalf("%s served a file outside .runner: %s", path, r.body)
		}
		wantError(t, r, code, kind)
	}
	check("/api/iterations/run-a/1/guard.log", 403, "refused")
	check("/api/iterations/run-a/1/guard.log?tail=5", 403, "refused")
	check("/api/iterations/run-out/1/guard.log", 403, "refused")
	check("/api/iterations/run-out/1", 403, "refused")
	check("/api/iterations/run-a/1/diff.patch", 403, "refused")
	check("/api/iterations/"+url.PathEscape("../..")+"/1/guard.log", 400, "bad_run")
	check("/api/iterations/..%2F..%2F..%2Fetc/1/guard.log", 400, "bad_run")
	check("/api/iterations/run-a/1/"+url.PathEscape("../../../GOAL.md"), 404, "not_found")
	check("/api/iterations/run-a/1/..%2fmeta.json", 404, "not_found")
	check("/api/runs/"+url.PathEscape("../state/tree"), 400, "bad_run")
	check("/api/nothing", 404, "not_found")
	// A symlink that stays inside .runner is followed.
	if r := get(t, s.url+"/api/iterations/run-a/1/prompt.md"); r.code != 200 || r.body != "inside .runner\n" {
		t.Fatalf("symlink inside .runner: %d %q", r.code, r.body)
	}
	// The listing does not follow the symlinked run either.
	if its := decode[Iterations](t, get(t, s.url+"/api/iterations")).Iterations; len(its) != 2 {
		t.Fatalf("listing followed a symlinked run: %+v", its)
	}
	// A path the mux cleans is redirected inside the API, never resolved on disk.
	if r := get(t, s.url+"/api/iterations/run-a/1/../../../../../etc/passwd"); strings.Contains(r.body, "root:") {
		t.Fatalf("dot segments: %s", r.body)
	}
}

func TestRunnerDirSymlinkRefused(t *testing.T) {
	real := fixture(t)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(real, ".runner"), filepath.Join(dir, ".runner")); err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Root: dir})
	r := get(t, s.url+"/api/tree")
	if r.code != 500 || !strings.Contains(r.body, "not a directory") {
		t.Fatalf("a symlinked .runner: %d %s", r.code, r.body)
	}
}

func TestHostCheck(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	port := s.url[strings.LastIndex(s.url, ":")+1:]
	for _, host := range []string{"evil.example:" + port, "localhost.evil.example:" + port, "127.0.0.1:1", "localhost", "attacker"} {
		wantError(t, get(t, s.url+"/api/tree", "Host", host), 421, "bad_host")
		wantError(t, get(t, s.url+"/events", "Host", host), 421, "bad_host")
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		if r := get(t, s.url+"/api/tree", "Host", host); r.code != 200 {
			t.Fatalf("Host %s: %d %s", host, r.code, r.body)
		}
	}
}

func TestAllowHostsUnspecified(t *testing.T) {
	s, err := New(Options{Root: t.TempDir(), NoAssets: true})
	if err != nil {
		t.Fatal(err)
	}
	s.AllowHosts(&netAddr{"0.0.0.0:8080"})
	for host, want := range map[string]bool{
		"192.168.1.5:8080": true, "127.0.0.1:8080": true, "localhost:8080": true, "[::1]:8080": true,
		"rebind.example:8080": false, "192.168.1.5:9090": false, "192.168.1.5": false,
	} {
		if got := s.hostAllowed(host); got != want {
			t.Errorf("Host %s on 0.0.0.0:8080: allowed=%v, want %v", host, got, want)
		}
	}
}

type netAddr struct{ s string }

func (a *netAddr) Network() string { return "tcp" }
func (a *netAddr) String() string  { return a.s }

func TestCancel(t *testing.T) {
	dir := fixture(t)
	cancelFile := filepath.Join(dir, ".runner/cancel")
	ro := start(t, Options{Root: dir})
	origin := func(s server) string { return s.url }
	wantError(t, do(t, "POST", ro.url+"/api/cancel", nil, "Origin", origin(ro)), 403, "read_only")
	if ro.LoginToken() != "" {
		t.Fatal("a read-only UI has a login token")
	}
	if r := get(t, ro.url+"/login?token="); r.code != 404 || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("sign-in to a read-only UI: %d %s", r.code, r.body)
	}
	if r := get(t, ro.url+"/api/cancel"); r.code != 405 {
		t.Fatalf("GET /api/cancel: %d", r.code)
	}
	if _, err := os.Lstat(cancelFile); err == nil {
		t.Fatal("a read-only UI wrote the cancel file")
	}
	s := start(t, Options{Root: dir, AllowCancel: true})
	cfg := decode[Config](t, get(t, s.url+"/api/config"))
	if !cfg.AllowCancel || cfg.ReadOnly || cfg.SignedIn || len(s.LoginToken()) != 32 {
		t.Fatalf("config: %+v", cfg)
	}
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url), 401, "sign_in")
	// A wrong token, and the right one in a HEAD (a link checker), sign
	// nothing in and spend nothing.
	for _, r := range []response{get(t, s.url+"/login?token="+strings.Repeat("0", 32)), get(t, s.url+"/login"), do(t, "HEAD", s.url+"/login?token="+s.LoginToken(), nil)} {
		if r.code != 403 && r.code != 405 || r.header.Get("Set-Cookie") != "" {
			t.Fatalf("a sign-in that should fail: %d %v", r.code, r.header)
		}
	}
	cookie := signIn(t, s.url, s.LoginToken())
	if r := get(t, s.url+"/login?token="+s.LoginToken()); r.code != 410 || !strings.Contains(r.body, "this login link was used at ") || r.header.Get("Set-Cookie") != "" {
		t.Fatalf("the spent link: %d %s", r.code, r.body)
	}
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Cookie", cookie), 403, "bad_origin")
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", "http://evil.example", "Cookie", cookie), 403, "bad_origin")
	// Sec-Fetch-Site, when the browser sends it, must say same-origin:
	// a page of another port or subdomain (same-site), a typed URL or a
	// bookmark (none) and another site (cross-site) are all refused.
	for _, site := range []string{"cross-site", "same-site", "none", "Same-Origin", "same-origin, cross-site"} {
		wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url, "Sec-Fetch-Site", site, "Cookie", cookie), 403, "bad_origin")
	}
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url+"/", "Cookie", cookie), 403, "bad_origin")
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", "null", "Sec-Fetch-Site", "same-origin", "Cookie", cookie), 403, "bad_origin")
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url, "X-Treeloop-Token", s.LoginToken()), 401, "sign_in")
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url, "Cookie", strings.Replace(cookie, "=", "=x", 1)), 401, "sign_in")
	if _, err := os.Lstat(cancelFile); err == nil {
		t.Fatal("a refused POST wrote the cancel file")
	}
	before := snapshot(t, filepath.Join(dir, ".runner"))
	r := do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url, "Sec-Fetch-Site", "same-origin", "Cookie", cookie)
	if r.code != 200 || !strings.Contains(r.body, `"cancel":"requested"`) {
		t.Fatalf("cancel: %d %s", r.code, r.body)
	}
	data, err := os.ReadFile(cancelFile)
	if err != nil || !bytes.HasPrefix(data, []byte(`by="runner-ui" pid=`)) {
		t.Fatalf("cancel file: %q %v", data, err)
	}
	// The cancel file and nothing else.
	after := snapshot(t, filepath.Join(dir, ".runner"))
	delete(after, "cancel")
	if len(after) != len(before) {
		t.Fatalf("cancel changed more than .runner/cancel: %d files before, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("cancel changed %s", k)
		}
	}
	if rs := decode[RunState](t, get(t, s.url+"/api/run-state")); !rs.CancelRequested {
		t.Fatal("run-state does not report the cancel")
	}
	// A client that sends no Sec-Fetch-Site (not a browser) with the
	// right Origin and cookie may cancel too.
	if err := os.Remove(cancelFile); err != nil {
		t.Fatal(err)
	}
	if r := do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url, "Cookie", cookie); r.code != 200 {
		t.Fatalf("cancel without Sec-Fetch-Site: %d %s", r.code, r.body)
	}
	if _, err := os.Lstat(cancelFile); err != nil {
		t.Fatalf("cancel without Sec-Fetch-Site: %v", err)
	}
}

// TestCancelWithoutRunner: a cancel file that cannot be written answers
// 500; a repository whose .runner is gone answers 404, writing nothing.
func TestCancelWithoutRunner(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir, AllowCancel: true})
	cookie := signIn(t, s.url, s.LoginToken())
	// A cancel file that cannot be written is the server's error.
	if err := os.MkdirAll(filepath.Join(dir, ".runner", "cancel", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url, "Sec-Fetch-Site", "same-origin", "Cookie", cookie), 500, "io")
	if err := os.RemoveAll(filepath.Join(dir, ".runner")); err != nil {
		t.Fatal(err)
	}
	wantError(t, do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url, "Sec-Fetch-Site", "same-origin", "Cookie", cookie), 404, "no_runner")
	if _, err := os.Lstat(filepath.Join(dir, ".runner")); err == nil {
		t.Fatal("the cancel recreated .runner")
	}
}

// snapshot maps every file under dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	m := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			m[rel] = string(data)
		}
		return nil
	})
	return m
}

func TestRuns(t *testing.T) {
	dir := fixture(t)
	host, _ := os.Hostname()
	running := runrecord.Record{ID: "run-b", RunID: "run-b", Branch: "runner/run-b", Status: runrecord.Running, StartedAt: t0.Add(2 * time.Hour),
		UpdatedAt: t0.Add(2 * time.Hour), Runner: runrecord.Runner{PID: os.Getpid(), Host: host}}
	if err := runrecord.Save(filepath.Join(dir, ".runner/runs/run-b.json"), running); err != nil {
		t.Fatal(err)
	}
	writeText(t, filepath.Join(dir, ".runner/runs/run-bad.json"), `{"version": 1}`)
	s := start(t, Options{Root: dir})
	runs := decode[Runs](t, get(t, s.url+"/api/runs"))
	if len(runs.Runs) != 2 || runs.Runs[0].ID != "run-a" || runs.Runs[1].ID != "run-b" || runs.Runs[1].Status != "running" ||
		len(runs.Problems) != 1 || !strings.Contains(runs.Problems[0], "run-bad.json") {
		t.Fatalf("runs: %+v", runs)
	}
	rec := decode[runrecord.Record](t, get(t, s.url+"/api/runs/run-a"))
	if rec.Status != "complete" || rec.Usage.CostUSD != 0.25 || rec.FinishedAt == nil {
		t.Fatalf("run-a: %+v", rec)
	}
	wantError(t, get(t, s.url+"/api/runs/run-zz"), 404, "not_found")
	wantError(t, get(t, s.url+"/api/runs/run-bad"), 422, "invalid_record")
	wantError(t, get(t, s.url+"/api/runs/.hidden"), 400, "bad_run")
	// No runs directory: an empty list.
	os.RemoveAll(filepath.Join(dir, ".runner/runs"))
	if r := get(t, s.url+"/api/runs"); r.code != 200 || !strings.Contains(r.body, `"runs":[]`) || !strings.Contains(r.body, `"problems":[]`) {
		t.Fatalf("no runs: %s", r.body)
	}
}

func TestAssets(t *testing.T) {
	dir := fixture(t)
	s := start(t, Options{Root: dir})
	r := get(t, s.url+"/")
	if r.code != 200 || r.header.Get("Cache-Control") != "no-cache" || !strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("index: %d %v", r.code, r.header)
	}
	i := strings.Index(r.body, `src="/assets/app.`) + len(`src="`)
	if i < len(`src="`) || strings.Contains(r.body, "{{") || strings.Contains(r.body, "http://") || strings.Contains(r.body, "https://") {
		t.Fatalf("index names its assets by hash and loads nothing from elsewhere: %s", r.body)
	}
	js := r.body[i : i+strings.Index(r.body[i:], `"`)]
	a := get(t, s.url+js)
	if a.code != 200 || !strings.Contains(a.header.Get("Cache-Control"), "immutable") || !strings.Contains(a.body, "EventSource") {
		t.Fatalf("asset %s: %d %v", js, a.code, a.header)
	}
	wantError(t, get(t, s.url+"/assets/app.js"), 404, "not_found")
	api := start(t, Options{Root: dir, NoAssets: true})
	if r := get(t, api.url+"/"); r.code != 404 {
		t.Fatalf("API-only mode serves the page: %d", r.code)
	}
	if r := get(t, api.url+"/api/tree"); r.code != 200 {
		t.Fatalf("API-only mode: /api/tree %d", r.code)
	}
}

func TestErrorsAreJSON(t *testing.T) {
	s := start(t, Options{Root: fixture(t)})
	r := get(t, s.url+"/api/iterations/run-a/1/nope.txt")
	var e map[string]any
	if json.Unmarshal([]byte(r.body), &e) != nil || len(e) != 2 || e["error"] != "not_found" {
		t.Fatalf("error body: %s", r.body)
	}
}
