package ui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/fsutil"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
)

// The attack on runner-ui's writes, played by a real process of the same
// user: it reads every GET endpoint the UI serves, looks for a credential in
// what it read (any long hex string, any cookie), and tries each, as a
// login token and as a session cookie, on POST /api/cancel and /api/answer
// with this server's Origin. Inside a session it also holds what it could
// have stolen elsewhere (the login link from a terminal's scrollback, the
// cookie from a browser profile, as an unsandboxed session can).

// attackEnv names the variable that makes the test binary the attacker
// (runCommand) and carries its plan.
const attackEnv = "TREELOOP_UI_TEST_ATTACK"

// attackTarget is one runner-ui the attacker attacks.
type attackTarget struct {
	Base   string   `json:"base"`   // http://127.0.0.1:PORT
	Paths  []string `json:"paths"`  // GET paths to read
	Token  string   `json:"token"`  // a stolen login token, "" for none
	Cookie string   `json:"cookie"` // a stolen Cookie header, "" for none
	Answer string   `json:"answer"` // the node id to answer
}

// attackPlan is what the attacker is told.
type attackPlan struct {
	Targets []attackTarget `json:"targets"`
	Brief   bool           `json:"brief"` // report bodies cut to 200 bytes (a session's log is capped)
}

// attackStep is one request the attacker made and its answer.
type attackStep struct {
	Target int         `json:"target"`
	Method string      `json:"method"`
	Path   string      `json:"path"`
	With   string      `json:"with"` // what it tried: "", "token", "cookie", "stolen token", "stolen cookie"
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   string      `json:"body"`
}

// attackReportPrefix starts the attacker's one line of report on stdout.
const attackReportPrefix = "ATTACK-REPORT "

// hexID is what a token or a session secret could look like: a hex
// string as long as an MD5 digest or longer (a commit id, a SHA-256).
var hexID = regexp.MustCompile(`\b[0-9a-f]{32,64}\b`)

// attackMain is the attacker's whole life: it plays its plan and prints
// its report; as an agent it then answers retry.
func attackMain() int {
	var plan attackPlan
	if err := json.Unmarshal([]byte(os.Getenv(attackEnv)), &plan); err != nil {
		fmt.Fprintln(os.Stderr, "attacker:", err)
		return 2
	}
	var steps []attackStep
	noRedirect := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for i, tg := range plan.Targets {
		do := func(method, path, with, body string, hdr ...string) attackStep {
			req, _ := http.NewRequest(method, tg.Base+path, strings.NewReader(body))
			for k := 0; k+1 < len(hdr); k += 2 {
				req.Header.Set(hdr[k], hdr[k+1])
			}
			st := attackStep{Target: i, Method: method, Path: path, With: with}
			res, err := noRedirect.Do(req)
			if err != nil {
				st.Body = "error: " + err.Error()
				return st
			}
			defer res.Body.Close()
			var data []byte
			if path == "/events" { // a stream: its opening events
				data, _ = readEvents(res.Body)
			} else {
				data, _ = io.ReadAll(res.Body)
			}
			st.Status, st.Header, st.Body = res.StatusCode, res.Header, string(data)
			if plan.Brief && len(st.Body) > 200 {
				st.Body = st.Body[:200]
			}
			return st
		}
		var read []attackStep
		for _, p := range tg.Paths {
			read = append(read, do("GET", p, "", ""))
		}
		read = append(read, do("GET", "/events", "Last-Event-ID", "", "Last-Event-ID", "0"))
		// What it read that could be a credential.
		seen := map[string]bool{}
		for _, st := range read {
			text := st.Body
			for k, v := range st.Header {
				text += "\n" + k + ": " + strings.Join(v, " ")
			}
			for _, m := range hexID.FindAllString(text, -1) {
				seen[m] = true
			}
		}
		steps = append(steps, read...)
		cands := slices.Sorted(func(yield func(string) bool) {
			for k := range seen {
				if !yield(k) {
					return
				}
			}
		})
		port := tg.Base[strings.LastIndex(tg.Base, ":")+1:]
		answer := `{"id": "` + tg.Answer + `", "answer": "the agent answers its own question"}`
		write := func(with string, hdr ...string) {
			h := append([]string{"Origin", tg.Base, "Sec-Fetch-Site", "same-origin", "Content-Type", "application/json"}, hdr...)
			steps = append(steps, do("POST", "/api/cancel", with, "", h...), do("POST", "/api/answer", with, answer, h...))
		}
		write("")
		for _, c := range cands {
			steps = append(steps, do("GET", "/login?token="+c, "token", ""))
			write("token", "X-Treeloop-Token", c)
			write("cookie", "Cookie", "treeloop-ui-"+port+"="+c+"; treeloop-ui="+c)
		}
		if tg.Token != "" {
			steps = append(steps, do("GET", "/login?token="+tg.Token, "stolen token", ""))
		}
		if tg.Cookie != "" {
			write("stolen cookie", "Cookie", tg.Cookie)
		}
	}
	data, _ := json.Marshal(steps)
	fmt.Printf("%s%s\n", attackReportPrefix, data)
	if out := os.Getenv("RUNNER_OUTPUT"); out != "" { // as an agent
		os.WriteFile(out, []byte(`{"status": "retry", "summary": "Tried runner-ui's writes.", "children": []}`), 0o644)
	}
	return 0
}

// readEvents reads an event stream's opening, up to its first event.
func readEvents(r io.Reader) ([]byte, error) {
	var out bytes.Buffer
	rd := bufio.NewReader(r)
	for {
		line, err := rd.ReadString('\n')
		out.WriteString(line)
		if err != nil || (line == "\n" && strings.Contains(out.String(), "event: ")) {
			return out.Bytes(), err
		}
	}
}

// attackReport is the report in out (the attacker's stdout or a session's
// log).
func attackReport(t *testing.T, out string) []attackStep {
	t.Helper()
	i := strings.Index(out, attackReportPrefix)
	if i < 0 {
		t.Fatalf("no attack report in:\n%s", out)
	}
	line, _, _ := strings.Cut(out[i+len(attackReportPrefix):], "\n")
	var steps []attackStep
	if err := json.Unmarshal([]byte(line), &steps); err != nil {
		t.Fatalf("attack report: %v", err)
	}
	return steps
}

// attackPaths are GET paths that cover every GET route the server s
// answers, on attackRepo's files.
func attackPaths(t *testing.T, s server) []string {
	t.Helper()
	index := get(t, s.url+"/")
	assets := regexp.MustCompile(`/assets/[^"]+`).FindAllString(index.body, -1)
	if len(assets) != 2 {
		t.Fatalf("the page's assets: %v", assets)
	}
	byRoute := map[string][]string{
		"GET /{$}":                                {"/"},
		"GET /assets/{name}":                      assets,
		"GET /api/config":                         {"/api/config"},
		"GET /api/tree":                           {"/api/tree"},
		"GET /api/run-state":                      {"/api/run-state"},
		"GET /api/iterations":                     {"/api/iterations", "/api/iterations?run=run-a", "/api/iterations?id=run-a/1"},
		"GET /api/iterations/{run}/{iter}":        {"/api/iterations/run-a/1", "/api/iterations/run-a/2"},
		"GET /api/iterations/{run}/{iter}/{file}": nil,
		"GET /api/nodes/{id}/artifacts":           {"/api/nodes/b/artifacts"},
		"GET /api/nodes/{id}/artifacts/{name...}": {"/api/nodes/b/artifacts/notes.md"},
		"GET /api/runs":                           {"/api/runs"},
		"GET /api/runs/{id}":                      {"/api/runs/run-a"},
		"GET /login":                              {"/login", "/login?token="},
		"GET /events":                             {"/events"},
	}
	for _, f := range []string{"guard.log", "executor.log", "prompt.md", "diff.patch", "events.jsonl"} {
		for _, q := range []string{"", "?tail=50", "?view=text"} {
			byRoute["GET /api/iterations/{run}/{iter}/{file}"] = append(byRoute["GET /api/iterations/{run}/{iter}/{file}"], "/api/iterations/run-a/1/"+f+q)
		}
	}
	byRoute["GET /api/iterations/{run}/{iter}/{file}"] = append(byRoute["GET /api/iterations/{run}/{iter}/{file}"],
		"/api/iterations/run-a/1/events.jsonl?view=compact", "/api/iterations/run-a/2/executor.log?view=compact")
	var paths []string
	for _, r := range s.routeTable() {
		if !strings.HasPrefix(r.pattern, "GET ") {
			continue
		}
		ps, ok := byRoute[r.pattern]
		if !ok || len(ps) == 0 {
			t.Fatalf("the attack reads no path of the route %q", r.pattern)
		}
		paths = append(paths, ps...)
	}
	return slices.DeleteFunc(paths, func(p string) bool { return p == "/events" }) // read as a stream
}

// attackRepo is fixture's repository as a git repository whose node b waits
// for an answer, with an artifact, and tree-edit for the answers.
func attackRepo(t *testing.T) (dir, treeEdit string) {
	t.Helper()
	dir = fixture(t)
	if _, err := commandPath(); err != nil {
		t.Fatal(err)
	}
	root := testTree("Fixture goal")
	root.Children[1].Waiting = "Postgres or SQLite?"
	files := map[string]string{
		".runner/state/tree.json":            string(tree.Encode(root)),
		".runner/.gitignore":                 "lock\nanswers/\niterations/\nruns/\ncancel\n",
		".runner/nodes/b/artifacts/notes.md": "# Notes\n",
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := fsutil.WriteAtomic(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitIn(t, dir, "init", "-q", "-b", "runner/run-a")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "start")
	return dir, filepath.Join(commandDir, "tree-edit")
}

// gitIn runs git in dir with a fixed identity.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// notes collects what a server tells the operator's terminal.
type notes struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notes) notify(msg string) { n.mu.Lock(); n.msgs = append(n.msgs, msg); n.mu.Unlock() }

func (n *notes) String() string { n.mu.Lock(); defer n.mu.Unlock(); return strings.Join(n.msgs, "\n") }

// A process of the operator's user, reading every GET endpoint of two
// runner-ui (one signed in by the operator, one not yet), finds neither a
// login token nor a session cookie, and none of its writes, with anything
// it found, is accepted or changes anything; the operator's own writes
// still are.
func TestAttackSameUser(t *testing.T) {
	dir, treeEdit := attackRepo(t)
	var told notes
	s := start(t, Options{Root: dir, AllowCancel: true, AllowAnswer: true, TreeEdit: treeEdit, Notify: told.notify})
	u := start(t, Options{Root: dir, AllowCancel: true, AllowAnswer: true, TreeEdit: treeEdit})
	token, unspent := s.LoginToken(), u.LoginToken()
	cookie := signIn(t, s.url, token)
	secrets := map[string]string{"the spent token": token, "the unspent token": unspent, "the session": cookie[strings.IndexByte(cookie, '=')+1:]}
	paths := attackPaths(t, s)
	head := gitIn(t, dir, "rev-parse", "HEAD")
	before := snapshot(t, filepath.Join(dir, ".runner"))

	plan, _ := json.Marshal(attackPlan{Targets: []attackTarget{
		{Base: s.url, Paths: paths, Answer: "b"}, {Base: u.url, Paths: paths, Answer: "b"},
	}})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), attackEnv+"="+string(plan))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the attacker: %v\n%s", err, stderr.String())
	}
	steps := attackReport(t, string(out))
	reads, logins, writes := 0, 0, 0
	for _, st := range steps {
		what := fmt.Sprintf("%s %s (%s) on %d", st.Method, st.Path, st.With, st.Target)
		text := st.Body
		for k, v := range st.Header {
			text += "\n" + k + ": " + strings.Join(v, " ")
		}
		for name, v := range secrets {
			if strings.Contains(text, v) {
				t.Errorf("%s: the answer holds %s", what, name)
			}
		}
		if len(st.Header.Values("Set-Cookie")) > 0 {
			t.Errorf("%s: a cookie was set: %v", what, st.Header.Values("Set-Cookie"))
		}
		switch {
		case st.Method == "POST":
			writes++
			if st.Status != http.StatusUnauthorized && st.Status != http.StatusForbidden {
				t.Errorf("%s: %d %s, want 401 or 403", what, st.Status, st.Body)
			}
		case strings.HasPrefix(st.Path, "/login"):
			logins++
			if st.Status != http.StatusForbidden && st.Status != http.StatusNotFound {
				t.Errorf("%s: %d %s", what, st.Status, st.Body)
			}
		default:
			reads++
			if st.Status != http.StatusOK {
				t.Errorf("%s: %d %s (the attack should read real data)", what, st.Status, st.Body)
			}
		}
	}
	// Both servers' pages, every path, the event stream; the ids the
	// fixture holds (a commit, say) tried as credentials.
	if reads != 2*(len(paths)+1)-4 || writes < 2*2*3 || logins < 2 {
		t.Fatalf("the attack made %d reads (of %d paths), %d logins, %d writes", reads, len(paths), logins, writes)
	}
	if after := snapshot(t, filepath.Join(dir, ".runner")); !mapsEqual(before, after) {
		t.Fatalf(".runner changed under the attack:\nbefore %v\nafter  %v", slices.Sorted(mapKeys(before)), slices.Sorted(mapKeys(after)))
	}
	if got := gitIn(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("a commit was made under the attack: %s", gitIn(t, dir, "log", "--oneline", "-3"))
	}
	if len(told.msgs) != 1 || !strings.HasPrefix(told.msgs[0], "signed in with the login link from 127.0.0.1:") {
		t.Fatalf("told the operator: %q", told.String())
	}

	// The operator's writes, and the unspent link, still work.
	if r := do(t, "POST", s.url+"/api/answer", strings.NewReader(`{"id": "b", "answer": "SQLite."}`), "Origin", s.url, "Cookie", cookie); r.code != 200 {
		t.Fatalf("the operator's answer: %d %s", r.code, r.body)
	}
	if r := do(t, "POST", s.url+"/api/cancel", nil, "Origin", s.url, "Cookie", cookie); r.code != 200 {
		t.Fatalf("the operator's cancel: %d %s", r.code, r.body)
	}
	signIn(t, u.url, unspent)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// An agent session that holds what it could steal outside a sandbox (the
// login link from a terminal's scrollback, the operator's cookie from a
// browser profile) still cannot sign in or write, under [sandbox] mode
// "none" and "bwrap" with the host's network: runner-ui refuses both to a
// session's process, without spending the link, and tells the operator.
// The session attacks two servers: one on its own repository that the
// operator signed in to (its cookie stolen), one on another repository
// whose link the operator has not used yet (the link stolen).
func TestAttackFromSession(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"none", "bwrap"} {
		t.Run(mode, func(t *testing.T) {
			repo := newLiveRepo(t)
			if mode != "none" {
				repo.sh(t, `sed -i 's/^mode = "none"$/mode = "`+mode+`"/' .runner/state/config.toml && git commit -qam 'the sandbox'`)
			}
			dirA, treeEdit := attackRepo(t)
			var toldA, toldB notes
			b := start(t, Options{Root: repo.dir, AllowCancel: true, AllowAnswer: true, TreeEdit: treeEdit, Notify: toldB.notify})
			cookie := signIn(t, b.url, b.LoginToken())
			a := start(t, Options{Root: dirA, AllowAnswer: true, TreeEdit: treeEdit, Notify: toldA.notify})
			headA := gitIn(t, dirA, "rev-parse", "HEAD")
			plan, _ := json.Marshal(attackPlan{Brief: true, Targets: []attackTarget{
				{Base: b.url, Paths: []string{"/api/config"}, Cookie: cookie, Answer: "root"},
				{Base: a.url, Paths: []string{"/api/config"}, Token: a.LoginToken(), Answer: "b"},
			}})
			env := append(slices.Clone(repo.env), "RUNNER_AGENT_BIN="+self, attackEnv+"="+string(plan))
			step, err := lookPathIn("runner-step", env)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(step)
			cmd.Dir, cmd.Env = repo.dir, env
			out, _ := cmd.CombinedOutput()
			if _, err := os.Lstat(filepath.Join(repo.dir, ".runner/cancel")); err == nil {
				t.Fatal("the session cancelled its run through runner-ui")
			}
			log, err := os.ReadFile(filepath.Join(repo.dir, ".runner/iterations/run-ui/0001/executor.log"))
			if err != nil {
				t.Fatalf("runner-step: %v\n%s", err, out)
			}
			var rec iterdir.Agent
			if err := iterdir.Read(filepath.Join(repo.dir, ".runner/iterations/run-ui/0001"), iterdir.AgentFile, &rec); err != nil {
				t.Fatal(err)
			}
			if want := strings.TrimPrefix(mode, "none"); rec.Sandbox != want {
				t.Fatalf("the session ran under sandbox %q, want %q", rec.Sandbox, want)
			}
			stolen := 0
			for _, st := range attackReport(t, string(log)) {
				what := fmt.Sprintf("%s %s (%s) on %d: %d %s", st.Method, st.Path, st.With, st.Target, st.Status, st.Body)
				switch {
				case st.With == "stolen token" || st.With == "stolen cookie":
					stolen++
					if st.Status != http.StatusForbidden || !strings.Contains(st.Body, "inside a running session") {
						t.Errorf("%s: want 403, from inside a running session", what)
					}
				case st.Method == "POST" && st.Status != http.StatusUnauthorized && st.Status != http.StatusForbidden:
					t.Errorf("%s: want 401 or 403", what)
				case st.Method == "GET" && strings.HasPrefix(st.Path, "/login") && st.Status != http.StatusForbidden:
					t.Errorf("%s: want 403", what)
				}
			}
			if stolen != 3 {
				t.Fatalf("%d writes and sign-ins with stolen credentials, want 3 (a sign-in, a cancel, an answer)", stolen)
			}
			if gitIn(t, dirA, "rev-parse", "HEAD") != headA {
				t.Fatal("the session's answer was committed")
			}
			if _, err := os.Lstat(filepath.Join(dirA, ".runner/answers")); err == nil {
				t.Fatal("the session's answer was queued")
			}
			if !strings.Contains(toldA.String(), "refused a sign-in with the login link from 127.0.0.1:") ||
				!strings.Contains(toldB.String(), "refused a cancel from 127.0.0.1:") || !strings.Contains(toldB.String(), "refused an answer from 127.0.0.1:") {
				t.Fatalf("told the operator:\n%s\n%s", toldA.String(), toldB.String())
			}
			// The link the session tried still signs the operator in, and
			// the operator's cookie still writes.
			cookieA := signIn(t, a.url, a.LoginToken())
			if r := do(t, "POST", a.url+"/api/answer", strings.NewReader(`{"id": "b", "answer": "SQLite."}`), "Origin", a.url, "Cookie", cookieA); r.code != 200 {
				t.Fatalf("the operator's answer: %d %s", r.code, r.body)
			}
			if r := do(t, "POST", b.url+"/api/cancel", nil, "Origin", b.url, "Cookie", cookie); r.code != 200 {
				t.Fatalf("the operator's cancel: %d %s", r.code, r.body)
			}
		})
	}
}
