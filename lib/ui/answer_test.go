package ui

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/tree"
)

// answerRepo is a git repository on a run branch whose committed tree has
// a leaf waiting for an answer, and tree-edit (commandPath) for it.
func answerRepo(t *testing.T) (dir, treeEdit string) {
	t.Helper()
	dir = t.TempDir()
	if _, err := commandPath(); err != nil {
		t.Fatal(err)
	}
	treeEdit = filepath.Join(commandDir, "tree-edit")
	root := &tree.Node{ID: "root", Title: "R", Next: tree.NextDecompose, MaxAttempts: 3, Children: []*tree.Node{
		{ID: "root.1", Order: 1, Title: "Store", Next: tree.NextExecute, MaxAttempts: 3, Waiting: "Postgres or SQLite?"},
	}}
	if err := os.MkdirAll(filepath.Join(dir, ".runner/state"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".runner/state/tree.json": string(tree.Encode(root)),
		".runner/.gitignore":      "lock\nanswers/\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "runner/r"}, {"add", "-A"}, {"commit", "-q", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir, treeEdit
}

// POST /api/answer answers through tree-edit answer: refused without
// --allow-answer, from another origin or without the token; committed
// when no runner holds the lock, queued while one does; a node that does
// not wait is a 409 with tree-edit's reason.
func TestAnswer(t *testing.T) {
	dir, treeEdit := answerRepo(t)
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@e")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@e")
	body := func(id, text string) *strings.Reader {
		return strings.NewReader(`{"id": "` + id + `", "answer": "` + text + `"}`)
	}
	ro := start(t, Options{Root: dir, AllowCancel: true, TreeEdit: treeEdit})
	wantError(t, do(t, "POST", ro.url+"/api/answer", body("root.1", "SQLite"), "Origin", ro.url, "Cookie", signIn(t, ro.url, ro.LoginToken())), 403, "read_only")
	if r := get(t, ro.url+"/api/answer"); r.code != 405 {
		t.Fatalf("GET /api/answer: %d", r.code)
	}

	s := start(t, Options{Root: dir, AllowAnswer: true, TreeEdit: treeEdit})
	if cfg := decode[Config](t, get(t, s.url+"/api/config")); !cfg.AllowAnswer || cfg.AllowCancel || cfg.ReadOnly || cfg.SignedIn {
		t.Fatalf("config: %+v", cfg)
	}
	wantError(t, do(t, "POST", s.url+"/api/answer", body("root.1", "SQLite"), "Origin", s.url), 401, "sign_in")
	cookie := signIn(t, s.url, s.LoginToken())
	if cfg := decode[Config](t, get(t, s.url+"/api/config", "Cookie", cookie)); !cfg.SignedIn {
		t.Fatalf("config, signed in: %+v", cfg)
	}
	wantError(t, do(t, "POST", s.url+"/api/answer", body("root.1", "SQLite"), "Origin", "http://evil.example", "Cookie", cookie), 403, "bad_origin")
	wantError(t, do(t, "POST", s.url+"/api/answer", body("root.1", "SQLite"), "Origin", s.url, "Cookie", cookie+"0"), 401, "sign_in")
	wantError(t, do(t, "POST", s.url+"/api/answer", strings.NewReader(`{"id": "root.1", "text": "x"}`), "Origin", s.url, "Cookie", cookie), 400, "bad_request")
	wantError(t, do(t, "POST", s.url+"/api/answer", body("../x", "SQLite"), "Origin", s.url, "Cookie", cookie), 400, "bad_request")
	wantError(t, do(t, "POST", s.url+"/api/answer", body("root", "SQLite"), "Origin", s.url, "Cookie", cookie), 409, "refused")

	// A runner holds the lock: the answer is queued for it.
	lock, err := os.OpenFile(filepath.Join(dir, ".runner/lock"), os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	r := do(t, "POST", s.url+"/api/answer", body("root.1", "SQLite, one file."), "Origin", s.url, "Sec-Fetch-Site", "same-origin", "Cookie", cookie)
	if r.code != 200 || !strings.Contains(r.body, `"answer":"queued"`) {
		t.Fatalf("answer under a runner: %d %s", r.code, r.body)
	}
	queued, _ := filepath.Glob(filepath.Join(dir, ".runner/answers/*-root.1.json"))
	if len(queued) != 1 {
		t.Fatalf("queued files: %v", queued)
	}
	data, _ := os.ReadFile(queued[0])
	if !strings.Contains(string(data), `"by": "runner-ui"`) || !strings.Contains(string(data), "SQLite, one file.") {
		t.Fatalf("queued answer: %s", data)
	}
	lock.Close()

	// No runner: committed at once.
	r = do(t, "POST", s.url+"/api/answer", body("root.1", "SQLite."), "Origin", s.url, "Cookie", cookie)
	if r.code != 200 || !strings.Contains(r.body, `"answer":"committed"`) {
		t.Fatalf("answer: %d %s", r.code, r.body)
	}
	log := exec.Command("git", "log", "-1", "--format=%s")
	log.Dir = dir
	if out, err := log.Output(); err != nil || strings.TrimSpace(string(out)) != "chore(loop): operator answer node root.1" {
		t.Fatalf("last commit: %q %v", out, err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, ".runner/state/tree.json"))
	next, ps := tree.Load(got)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if n, _ := tree.Find(next, "root.1"); n.IsWaiting() || len(n.Answers) != 1 || n.Answers[0].Answer != "SQLite." {
		t.Fatalf("node after the answer: %+v", n)
	}
}

// TestAnswerToolOutcomes: how tree-edit answer's end becomes the reply:
// exit 0 is committed, or queued when it prints queued=…; exit 1 and 80
// (a refusal, a usage error) are 409 with its last line of stderr; any
// other exit is 500 with that line, and a tree-edit that cannot start is
// 500 with the reason it did not.
func TestAnswerToolOutcomes(t *testing.T) {
	dir := fixture(t)
	bin := t.TempDir()
	for _, c := range []struct {
		name, script string
		code         int
		kind, text   string
	}{
		{"committed", "echo committed=abc", 200, "", `"answer":"committed"`},
		{"queued", "echo queued=.runner/answers/x.json", 200, "", `"answer":"queued"`},
		{"refused", "echo 'tree-edit: a first line' >&2; echo 'tree-edit: node root.1 does not wait' >&2; exit 1", 409, "refused", "tree-edit: node root.1 does not wait"},
		{"usage", "echo 'tree-edit: usage' >&2; exit 80", 409, "refused", "tree-edit: usage"},
		{"failed", "echo 'tree-edit: git commit failed' >&2; echo >&2; exit 6", 500, "answer", "tree-edit answer failed: tree-edit: git commit failed"},
		{"silent", "exit 6", 500, "answer", "tree-edit answer failed: exit status 6"},
		{"missing", "", 500, "answer", "no such file or directory"},
	} {
		treeEdit := filepath.Join(bin, c.name)
		if c.script != "" {
			writeText(t, treeEdit, "#!/bin/sh\ncat >/dev/null\n"+c.script+"\n")
			if err := os.Chmod(treeEdit, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		s := start(t, Options{Root: dir, AllowAnswer: true, TreeEdit: treeEdit})
		r := do(t, "POST", s.url+"/api/answer", strings.NewReader(`{"id": "root.1", "answer": "SQLite"}`), "Origin", s.url, "Cookie", signIn(t, s.url, s.LoginToken()))
		if c.kind != "" {
			wantError(t, r, c.code, c.kind)
		}
		if r.code != c.code || !strings.Contains(r.body, c.text) {
			t.Errorf("%s: %d %s, want %d with %q", c.name, r.code, r.body, c.code, c.text)
		}
	}
}

// TestShutdownFinishesRequests: a request in flight when the server is
// told to stop (an answer whose tree-edit is still running) is answered
// before Serve returns, not cut off.
func TestShutdownFinishesRequests(t *testing.T) {
	dir := fixture(t)
	ctl := t.TempDir()
	treeEdit := filepath.Join(ctl, "tree-edit")
	writeText(t, treeEdit, "#!/bin/sh\ncat >/dev/null\n: > "+ctl+"/started\ni=0\nwhile [ ! -e "+ctl+"/go ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done\necho committed=abc\n")
	if err := os.Chmod(treeEdit, 0o755); err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Root: dir, AllowAnswer: true, TreeEdit: treeEdit, NoAssets: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	cookie := signIn(t, url, srv.LoginToken())
	answered := make(chan response, 1)
	go func() {
		req, _ := http.NewRequest("POST", url+"/api/answer", strings.NewReader(`{"id": "root.1", "answer": "SQLite"}`))
		req.Header.Set("Origin", url)
		req.Header.Set("Cookie", cookie)
		res, err := client.Do(req)
		if err != nil {
			answered <- response{body: err.Error()}
			return
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		answered <- response{res.StatusCode, string(body), res.Header}
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(ctl, "started")); err == nil {
			break
		}
		if i > 3000 {
			t.Fatal("tree-edit never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	writeText(t, filepath.Join(ctl, "go"), "")
	if r := <-answered; r.code != 200 || !strings.Contains(r.body, `"answer":"committed"`) {
		t.Fatalf("the answer in flight at shutdown: %d %s", r.code, r.body)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
