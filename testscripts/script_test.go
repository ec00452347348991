// Package testscripts runs the .txtar scripts in this directory against the
// treeloop commands as they ship: the binaries `go build ./cmd/...` makes,
// first on $PATH (builtCommands).
package testscripts

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
)

// mainFunc is the signature of a test helper's Main.
type mainFunc func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// helpers maps the name of each test-only program (the scripted model
// server, jsonq) to its Main; testscript.Main puts them on $PATH. No
// treeloop command is among them: the scripts run the binaries that
// `go build ./cmd/...` makes (see builtCommands), so what a script runs
// is what ships, with what each binary links and nothing more.
var helpers = map[string]mainFunc{}

func TestMain(m *testing.M) {
	interruptibleCommands()
	cmds := map[string]func(){}
	for name, f := range helpers {
		cmds[name] = func() { os.Exit(f(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
	}
	testscript.Main(builtCommands{m}, cmds)
}

// interruptIgnoredAtStart says whether the suite started with SIGINT
// ignored (interruptibleCommands).
var interruptIgnoredAtStart = signal.Ignored(os.Interrupt)

// interruptibleCommands gives the commands the suite starts SIGINT's
// default disposition when the suite itself was started with SIGINT
// ignored, as a shell starts a background job (`go test ... &` in a
// script). An ignored signal stays ignored across exec, and testscript
// stops a script's background commands (`exec modelserver ... &`) with
// SIGINT: each such script then waited for ever at its end. A signal the
// process handles is reset to its default in a child, so the suite handles
// SIGINT here and, as it was asked to, does nothing with it.
func interruptibleCommands() {
	if !interruptIgnoredAtStart {
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	go func() {
		for range c {
		}
	}()
}

// goCache is the host's Go build cache, "" when unknown.
var goCache = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
})

// goModCache is the host's Go module cache, "" when unknown.
var goModCache = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
})

// rustHome is the rustup or cargo home of the user running the tests:
// $NAME, else ~/DIR when it exists; "" when neither.
func rustHome(name, dir string) string {
	if d := os.Getenv(name); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(home, dir)); err != nil {
		return ""
	}
	return filepath.Join(home, dir)
}

// repoRoot is the treeloop checkout (for hooks/ and tools/).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

func TestScripts(t *testing.T) {
	t.Parallel()
	trackSources(t)
	if !testing.Short() {
		prebuildGoSeed(t)
	}
	files := scriptFiles()
	runScripts(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("TESTSCRIPT_UPDATE") == "1",
		Condition:           engineCondition,
		Setup: func(env *testscript.Env) error {
			home := filepath.Join(env.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			root := repoRoot()
			env.Setenv("HOME", home)
			env.Setenv("TREELOOP_SRC", root)
			env.Setenv("PATH", filepath.Join(root, "tools")+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "Test Author")
			env.Setenv("GIT_AUTHOR_EMAIL", "author@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "Test Committer")
			env.Setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
			env.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
			env.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
			// The demo's guard runs go test: share the build cache.
			if c := goCache(); c != "" {
				env.Setenv("GOCACHE", c)
			}
			// runner-init writes [sandbox] mode = "bwrap" where bubblewrap
			// works; the scripts choose it themselves (RUNNER_SANDBOX=bwrap
			// or auto), so that a script means the same on any machine.
			env.Setenv("RUNNER_SANDBOX", "none")
			// The module cache's downloads, a proxy of every module the
			// build needs (GOPROXY=file://…), for recipes run offline.
			env.Setenv("GOMODCACHE_DOWNLOADS", filepath.Join(goModCache(), "cache", "download"))
			// The scripts' home is their own: rustup's proxies (cargo)
			// find the toolchains of the user running the tests through
			// these, when that user has them.
			for _, v := range []struct{ name, dir string }{{"RUSTUP_HOME", ".rustup"}, {"CARGO_HOME", ".cargo"}} {
				if d := rustHome(v.name, v.dir); d != "" {
					env.Setenv(v.name, d)
				}
			}
			if d := goSeedDir(); d != "" {
				env.Setenv("RUNNER_GO_SEED_DIR", d)
			}
			env.Setenv("LC_ALL", "C")
			env.Setenv("NO_COLOR", "1")
			env.Values[heldLocks{}] = map[string]*os.File{}
			recordCPU(env)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":    exitcode,
			"mkrepo":      mkrepo,
			"normjson":    normjson,
			"holdlock":    holdlock,
			"schemaok":    schemaok,
			"vartmp":      vartmp,
			"recipe":      recipeCmd,
			"confset":     confset,
			"checkout":    checkoutCmd,
			"modproxy":    modproxyCmd,
			"nodemodules": nodemodules,
		},
	})
}

// exitcode N cmd args... runs cmd and fails unless it exits with exactly N;
// stdout and stderr are kept for the next assertions, as with exec.
func exitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		got = ee.ExitCode()
	default:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// holdlock FILE takes an exclusive flock(2) on FILE (created if missing) in
// the test process and holds it until the script ends, or until
// "holdlock -release FILE": another runner holding .runner/lock, without a
// background process whose start the script would have to guess.
func holdlock(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[0] != "-release") {
		ts.Fatalf("usage: holdlock [-release] FILE")
	}
	name := ts.MkAbs(args[len(args)-1])
	held := ts.Value(heldLocks{}).(map[string]*os.File)
	if len(args) == 2 {
		f := held[name]
		if f == nil {
			ts.Fatalf("holdlock: %s is not held", name)
		}
		f.Close() // closing the descriptor releases the lock
		delete(held, name)
		return
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644) // close-on-exec: no child inherits it
	if err != nil {
		ts.Fatalf("holdlock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		ts.Fatalf("holdlock: %s: %v", name, err)
	}
	held[name] = f
	ts.Defer(func() { f.Close() })
}

// heldLocks keys the per-script map of files holdlock holds.
type heldLocks struct{}

// mkrepo DIR makes DIR (relative to the current directory) a git repository
// on branch main whose first commit holds DIR's files ("initial").
func mkrepo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkrepo DIR")
	}
	dir := ts.MkAbs(args[0])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		ts.Fatalf("mkrepo: %v", err)
	}
	for _, a := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "initial"}} {
		if err := ts.Exec("git", append([]string{"-C", dir}, a...)...); err != nil {
			ts.Fatalf("mkrepo: git %s: %v", a[0], err)
		}
	}
}

// vartmp VAR makes an empty directory under /var/tmp, removed when the
// script ends, and sets VAR to its path: a place outside the system's
// temporary directory, which the bwrap sandbox hides whole (a home
// directory there would prove nothing about hiding the home).
func vartmp(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: vartmp VAR")
	}
	dir, err := os.MkdirTemp("/var/tmp", "treeloop-test-")
	if err != nil {
		ts.Fatalf("vartmp: %v", err)
	}
	ts.Defer(func() { os.RemoveAll(dir) })
	ts.Setenv(args[0], dir)
}

// schemaok KIND FILE fails unless FILE is valid against the embedded
// schema KIND (lib/schema, e.g. runner_status.v1).
func schemaok(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: schemaok KIND FILE")
	}
	v, err := jsonstrict.Decode([]byte(ts.ReadFile(args[1])))
	if err != nil {
		ts.Fatalf("schemaok: %s: %v", args[1], err)
	}
	if vs := full.Validate(schema.Kind(args[0]), v); len(vs) > 0 {
		ts.Fatalf("schemaok: %s: %s: %s", args[1], vs[0].Pointer, vs[0].Message)
	}
}

// volatile are the JSON keys whose values depend on the clock or on
// commit hashes; normjson masks them.
var volatile = map[string]bool{
	"started_at": true, "ended_at": true, "deadline": true, "duration_ms": true,
	"commit": true, "head_before": true, "head": true, "staged_tree": true, "staged_index": true,
}

// normjson FILE prints FILE's JSON indented, with the values of volatile
// keys replaced by "<volatile>" and $WORK in strings replaced by "$WORK",
// so iteration records can be compared exactly.
func normjson(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: normjson FILE")
	}
	data := ts.ReadFile(args[0])
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		ts.Fatalf("normjson: %s: %v", args[0], err)
	}
	work := ts.Getenv("WORK")
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if volatile[k] && e != nil {
					x[k] = "<volatile>"
				} else {
					x[k] = walk(e)
				}
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			return strings.ReplaceAll(x, work, "$WORK")
		}
		return v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(walk(v)); err != nil {
		ts.Fatalf("normjson: %v", err)
	}
	ts.Stdout().Write(buf.Bytes())
}
