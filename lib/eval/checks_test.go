package eval

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// workspace is a finished attempt's work tree: files, and a task tree
// whose root and one grandchild pass (depth 2).
func workspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	files := map[string]string{
		"notes.txt":                     "one\ntwo\nthree: done\n",
		"data.json":                     `{"a": {"b": [1, "two", {"k": true}]}, "n": 3, "o": {"y": 2, "x": 1}}`,
		"broken.json":                   `{"a": `,
		".runner/state/tree.json":       `{"passes": true, "children": [{"passes": false, "children": [{"passes": true, "children": []}]}, {"passes": false, "children": []}]}`,
		"other/.runner/state/tree.json": `{"passes": `,
	}
	for name, content := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("nowhere", filepath.Join(ws, "dangling")); err != nil {
		t.Fatal(err)
	}
	return ws
}

// parseChecks is a case with the [[checks]] given.
func parseChecks(t *testing.T, checks string) *Case {
	t.Helper()
	c, ps := ParseCase("/cases/c.toml", []byte("[case]\nid = \"c\"\ngoal = \"# G\"\n"+checks))
	if len(ps) > 0 {
		t.Fatalf("case: %v", ps)
	}
	return c
}

// TestRunChecks: every kind, passing and failing, with its reason.
func TestRunChecks(t *testing.T) {
	ws := workspace(t)
	c := parseChecks(t, everyCheck)
	got := RunChecks(context.Background(), c, CheckEnv{Workspace: ws})
	if len(got) != len(everyCheckResult) {
		t.Fatalf("%d results for %d checks", len(got), len(everyCheckResult))
	}
	for i, w := range everyCheckResult {
		g := got[i]
		if g.Pass != w.pass || g.Name != w.name || g.Reason != w.reason || g.Type != c.Checks[i].Type {
			t.Errorf("check %d: %v %q %q, want %v %q %q", i, g.Pass, g.Name, g.Reason, w.pass, w.name, w.reason)
		}
	}
}

// TestRunnerCompleted: the loop ended complete and the root passes; the
// tree is read from the workspace, a broken or missing one is the reason.
func TestRunnerCompleted(t *testing.T) {
	ws := workspace(t)
	c := parseChecks(t, "[[checks]]\ntype = \"runner_completed\"\n")
	for _, x := range []struct {
		ws       string
		complete bool
		pass     bool
		reason   string
	}{
		{ws, true, true, "runner-loop ended complete and the root passes"},
		{ws, false, false, "runner-loop did not end complete (root passes=true)"},
		{filepath.Join(ws, "other"), true, false, ".runner/state/tree.json: unexpected end of JSON input"},
		{filepath.Join(ws, "none"), true, false, "cannot read .runner/state/tree.json: no such file or directory"},
	} {
		r := RunChecks(context.Background(), c, CheckEnv{Workspace: x.ws, LoopComplete: x.complete})[0]
		if r.Pass != x.pass || r.Reason != x.reason {
			t.Errorf("%s complete=%v: %v %q", x.ws, x.complete, r.Pass, r.Reason)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".runner/state/tree.json"), []byte(`{"passes": false, "children": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := RunChecks(context.Background(), c, CheckEnv{Workspace: ws, LoopComplete: true})[0]
	if r.Pass || r.Reason != "runner-loop ended complete but the root does not pass" {
		t.Errorf("root not passed: %v %q", r.Pass, r.Reason)
	}
	tc := parseChecks(t, "[[checks]]\ntype = \"tree_max_depth\"\nmax = 1\n")
	r = RunChecks(context.Background(), tc, CheckEnv{Workspace: filepath.Join(ws, "none")})[0]
	if r.Pass || !strings.HasPrefix(r.Reason, "cannot read .runner/state/tree.json") {
		t.Errorf("tree check without a tree: %v %q", r.Pass, r.Reason)
	}
	if r := runCheck(context.Background(), Check{Type: "nope"}, CheckEnv{Workspace: ws}); r.Pass || r.Reason != `unknown check type "nope"` {
		t.Errorf("unknown type: %+v", r)
	}
}

// TestCommandSucceeds: exit 0 passes; another exit fails with the last
// line of output; a command that outlives its timeout is killed with its
// process group; an interrupted eval stops it; a missing program cannot
// start. The environment and directory are the check's.
func TestCommandSucceeds(t *testing.T) {
	ws := workspace(t)
	run := func(ctx context.Context, cmd string, timeout int) CheckResult {
		t.Helper()
		ch := Check{Type: CommandSucceeds, Cmd: []string{"sh", "-c", cmd}, TimeoutSecs: timeout}
		return runCommand(ctx, ch, CheckEnv{Workspace: ws, Env: []string{"X=from-env", "PATH=" + os.Getenv("PATH")}})
	}
	r := run(context.Background(), `test "$X" = from-env && test -f notes.txt && echo fine`, 60)
	if !r.Pass || r.Reason != "sh exited 0" || *r.ExitCode != 0 || r.Output != "fine\n" {
		t.Errorf("exit 0: %+v", r)
	}
	r = run(context.Background(), `echo first; echo '  last line  '; echo; exit 3`, 60)
	if r.Pass || r.Reason != "sh exited 3: last line" || *r.ExitCode != 3 {
		t.Errorf("exit 3: %+v", r)
	}
	r = run(context.Background(), `exit 4`, 60)
	if r.Pass || r.Reason != "sh exited 4" {
		t.Errorf("exit 4 without output: %+v", r)
	}
	r = run(context.Background(), `printf '%0300d\n' 0; exit 1`, 60)
	if want := "sh exited 1: " + strings.Repeat("0", 200) + "…"; r.Reason != want {
		t.Errorf("long last line: %q", r.Reason)
	}
	r = run(context.Background(), `head -c 5000 /dev/zero | tr '\0' x; echo END`, 60)
	if !r.Pass || len(r.Output) != outputTail+len("…") || !strings.HasSuffix(r.Output, "xEND\n") || !strings.HasPrefix(r.Output, "…x") {
		t.Errorf("long output kept %d bytes: %q…", len(r.Output), r.Output[:10])
	}
	start := time.Now()
	r = run(context.Background(), `sleep 60 & echo started; wait`, 1)
	if r.Pass || r.Reason != "sh did not finish within 1s" || time.Since(start) > 30*time.Second || r.Output != "started\n" {
		t.Errorf("timeout: %+v after %v", r, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = run(ctx, `sleep 60`, 60)
	if r.Pass || r.Reason != "sh was stopped: the eval was interrupted" {
		t.Errorf("interrupted: %+v", r)
	}
	r = runCommand(context.Background(), Check{Type: CommandSucceeds, Cmd: []string{"no-such-program-x"}, TimeoutSecs: 5}, CheckEnv{Workspace: ws})
	if r.Pass || !strings.HasPrefix(r.Reason, "cannot start no-such-program-x: ") {
		t.Errorf("missing program: %+v", r)
	}
	r = run(context.Background(), `kill -9 $$`, 60)
	if r.Pass || r.Reason != "sh exited -1" {
		t.Errorf("killed by a signal: %+v", r)
	}
}

func TestTextHelpers(t *testing.T) {
	if got := tail("abcdef", 6); got != "abcdef" {
		t.Errorf("tail at the limit: %q", got)
	}
	if got := tail("abcdefg", 6); got != "…bcdefg" {
		t.Errorf("tail over the limit: %q", got)
	}
	if got := clip("abcdef", 6); got != "abcdef" {
		t.Errorf("clip at the limit: %q", got)
	}
	if got := clip("abcdefg", 6); got != "abcdef…" {
		t.Errorf("clip over the limit: %q", got)
	}
	for in, want := range map[string]string{"a\nb\n\n": "b", " only ": "only", "": "", "x\n  y  ": "y"} {
		if got := LastLine(in); got != want {
			t.Errorf("LastLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// everyCheck is a [[checks]] list of every kind, passing and failing on
// the workspace.
const everyCheck = `
[[checks]]
type = "file_exists"
path = "notes.txt"
[[checks]]
type = "file_exists"
path = "dangling"
[[checks]]
type = "file_exists"
path = "missing"
name = "named"
[[checks]]
type = "file_contains"
path = "notes.txt"
pattern = '^three: \w+$'
[[checks]]
type = "file_contains"
path = "notes.txt"
pattern = '^two$'
[[checks]]
type = "file_contains"
path = "notes.txt"
pattern = 'four'
[[checks]]
type = "file_contains"
path = "missing"
pattern = 'x'
[[checks]]
type = "json_path"
path = "data.json"
query = "a.b.2"
equals = {k = true}
[[checks]]
type = "json_path"
path = "data.json"
query = "o"
equals = {x = 1, y = 2}
[[checks]]
type = "json_path"
path = "data.json"
query = "n"
equals = 3.0
[[checks]]
type = "json_path"
path = "data.json"
query = "a.b.1"
equals = 2
[[checks]]
type = "json_path"
path = "data.json"
query = "a.c"
equals = 2
[[checks]]
type = "json_path"
path = "data.json"
query = "a.c"
exists = false
[[checks]]
type = "json_path"
path = "data.json"
query = "a.b"
exists = false
[[checks]]
type = "json_path"
path = "data.json"
query = "a.b"
exists = true
[[checks]]
type = "json_path"
path = "broken.json"
query = "a"
exists = true
[[checks]]
type = "json_path"
path = "missing.json"
query = "a"
exists = true
[[checks]]
type = "tree_passed_count"
min = 2
max = 2
[[checks]]
type = "tree_passed_count"
min = 3
[[checks]]
type = "tree_passed_count"
max = 1
[[checks]]
type = "tree_max_depth"
min = 2
[[checks]]
type = "tree_max_depth"
max = 2
[[checks]]
type = "tree_max_depth"
min = 0
max = 1
[[checks]]
type = "tree_max_depth"
min = 3
max = 9
[[checks]]
type = "runner_completed"
`

// everyCheckResult is each of everyCheck's results.
var everyCheckResult = []struct {
	pass   bool
	name   string
	reason string
}{
	{true, "file_exists notes.txt", "notes.txt exists"},
	{true, "file_exists dangling", "dangling exists"},
	{false, "named", "missing does not exist"},
	{true, "file_contains notes.txt", `notes.txt matches /^three: \w+$/ at line 3`},
	{true, "file_contains notes.txt", "notes.txt matches /^two$/ at line 2"},
	{false, "file_contains notes.txt", "notes.txt (20 bytes) has no match for /four/"},
	{false, "file_contains missing", "cannot read missing: no such file or directory"},
	{true, "json_path data.json a.b.2", `data.json: a.b.2 = {"k":true}`},
	{true, "json_path data.json o", `data.json: o = {"x":1,"y":2}`},
	{true, "json_path data.json n", "data.json: n = 3"},
	{false, "json_path data.json a.b.1", `data.json: a.b.1 = "two", want 2`},
	{false, "json_path data.json a.c", "data.json: a.c does not exist, want 2"},
	{true, "json_path data.json a.c", "data.json: a.c exists=false"},
	{false, "json_path data.json a.b", "data.json: a.b exists=true, want false"},
	{true, "json_path data.json a.b", "data.json: a.b exists=true"},
	{false, "json_path broken.json a", "broken.json is not valid JSON"},
	{false, "json_path missing.json a", "cannot read missing.json: no such file or directory"},
	{true, "tree_passed_count", "passed nodes 2 within [2, 2]"},
	{false, "tree_passed_count", "passed nodes 2, want >= 3"},
	{false, "tree_passed_count", "passed nodes 2, want <= 1"},
	{true, "tree_max_depth", "maximum depth 2 within >= 2"},
	{true, "tree_max_depth", "maximum depth 2 within <= 2"},
	{false, "tree_max_depth", "maximum depth 2, want [0, 1]"},
	{false, "tree_max_depth", "maximum depth 2, want [3, 9]"},
	{false, "runner_completed", "runner-loop did not end complete (root passes=true)"},
}

// TestCommandTimeoutKillsGroup: a command_succeeds check that outlives
// its timeout is stopped with its whole process group, a background
// child too, and one that ignores SIGTERM is killed after the grace.
func TestCommandTimeoutKillsGroup(t *testing.T) {
	for name, script := range map[string]string{
		"stops on TERM":      `sleep 300 & echo $! > bg.pid; echo started; wait`,
		"child ignores TERM": `(trap '' TERM; exec sleep 300) & echo $! > bg.pid; echo started; wait`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits out its 1 s timeout
			ws := workspace(t)
			ch := Check{Type: CommandSucceeds, Cmd: []string{"sh", "-c", script}, TimeoutSecs: 1}
			r := runCommand(t.Context(), ch, CheckEnv{Workspace: ws})
			if r.Pass || r.Reason != "sh did not finish within 1s" || r.Output != "started\n" {
				t.Errorf("timeout: %+v", r)
			}
			data, err := os.ReadFile(filepath.Join(ws, "bg.pid"))
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			if !dead(pid, 30*time.Second) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("the check's background child %d survived its timeout", pid)
			}
		})
	}
}

// dead waits up to wait for pid to be gone: kill -0 fails, or it is a
// zombie (an orphan that PID 1, in a container, may never reap).
func dead(pid int, wait time.Duration) bool {
	end := time.Now().Add(wait)
	for {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(data), ')'); i >= 0 && i+2 < len(data) && (data[i+2] == 'Z' || data[i+2] == 'X') {
				return true
			}
		}
		if time.Now().After(end) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
