package guard

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/evidence"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/ratchet"
)

// repoWith is a git repository whose one commit holds files (path:
// content), with git's test identity in this process's environment.
func repoWith(t *testing.T, files map[string]string, msg string) (string, *git.Repo) {
	t.Helper()
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	writeFiles(t, dir, files)
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	repo, err := git.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, repo
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunBest: the run's best as the step's base commit holds it: the
// names of tests_passed.txt (the run's own header only) and, when asked,
// the ratchet's count from the commits' trailers; a work tree's edit of
// the names file is not read.
func TestRunBest(t *testing.T) {
	names := string(ratchet.FormatNames("run-a", []string{"s::a", "s::b"}))
	dir, _ := repoWith(t, map[string]string{layout.TestsPassed: names}, "chore(loop): start run run-a\n\n"+ratchet.TrailerLine(7))
	writeFiles(t, dir, map[string]string{layout.TestsPassed: string(ratchet.FormatNames("run-a", []string{"s::forged"}))})
	b, err := RunBest(dir, "run-a", "HEAD", true)
	if err != nil || !b.Found || b.Count != 7 || !slices.Equal(b.Names, []string{"s::a", "s::b"}) || b.Commit == "" {
		t.Errorf("RunBest = %+v, %v; want 7 and s::a, s::b", b, err)
	}
	b, err = RunBest(dir, "run-a", "HEAD", false)
	if err != nil || b.Found || b.Count != 0 || len(b.Names) != 2 {
		t.Errorf("RunBest without the count = %+v, %v", b, err)
	}
	if b, err := RunBest(dir, "run-other", "HEAD", true); err != nil || b.Found || b.Names != nil {
		t.Errorf("another run's best = %+v, %v; want none", b, err)
	}
	if _, err := RunBest(dir, "run-a", "no-such-commit", false); err == nil {
		t.Error("a base that is no commit read")
	}
	if _, err := RunBest(t.TempDir(), "run-a", "HEAD", false); err == nil {
		t.Error("no repository read")
	}
}

// TestRecord: what a guard leaves for the next: the tests that passed when
// its evidence held, or at a baseline that read any results (green or
// not), never after a pass whose evidence did not hold; the private
// caches' digest whenever there are caches, read back by
// ParseCacheDigest.
func TestRecord(t *testing.T) {
	names := filepath.FromSlash(layout.TestsPassed)
	for _, c := range []struct {
		name     string
		ev       *iterdir.Evidence
		baseline bool
		want     bool
	}{
		{"held", &iterdir.Evidence{Held: true, PassedNames: []string{"s::a"}}, false, true},
		{"not held", &iterdir.Evidence{Held: false, PassedNames: []string{"s::a"}, Sources: []string{"r.xml"}}, false, false},
		{"a baseline with results", &iterdir.Evidence{Sources: []string{"r.xml"}, PassedNames: []string{"s::a"}}, true, true},
		{"a baseline without", &iterdir.Evidence{PassedNames: []string{"s::a"}}, true, false},
		{"no evidence", nil, true, false},
	} {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, ".runner", "state"), 0o755)
		if err := Record(root, "run-a", iterdir.Guard{Evidence: c.ev}, nil, c.baseline); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		data, err := os.ReadFile(filepath.Join(root, names))
		if got := err == nil; got != c.want {
			t.Errorf("%s: names written %v, want %v", c.name, got, c.want)
		}
		if c.want && string(data) != string(ratchet.FormatNames("run-a", []string{"s::a"})) {
			t.Errorf("%s: names %q", c.name, data)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(layout.GuardCache))); err == nil {
			t.Errorf("%s: a caches' digest with no caches", c.name)
		}
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".runner", "state"), 0o755)
	caches := evidence.CachesFor(filepath.Join(root, ".git"))
	if err := caches.Prepare(); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, caches.Root, map[string]string{"go-build/ab/x-d": "object"})
	if err := Record(root, "run-a", iterdir.Guard{}, &caches, false); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(layout.GuardCache)))
	want, _ := caches.Digest()
	if err != nil || want == "" || ParseCacheDigest(data) != want {
		t.Errorf("the caches' digest %q (%v), want %q", data, err, want)
	}
	if ParseCacheDigest([]byte("# another file\n"+want)) != "" {
		t.Error("a digest read from a file without the header")
	}
}

// TestBaseline: runner-start's guard baseline records its run in the
// run's iterations directory, read back by ReadBaseline, and leaves the
// tests that passed for the run's first node; a run without one reads
// as none.
func TestBaseline(t *testing.T) {
	dir, _ := repoWith(t, map[string]string{"README": "x", ".runner/state/.keep": ""}, "initial")
	cfg := config.Default()
	cfg.Sandbox.Mode = config.SandboxNone
	cfg.Guard.Results = "auto"
	cfg.Guard.Command = []string{"sh", "-c", "cat > \"$RUNNER_TEST_RESULTS/r.xml\" <<'EOF'\n" + junit("a", "!b") + "\nEOF\nexit 1"}
	env := &cli.Env{Name: "runner-start", Dir: dir, Stdout: io.Discard, Stderr: io.Discard}
	if _, ok, err := ReadBaseline(dir, "run-a"); ok || err != nil {
		t.Fatalf("a baseline before any: %v, %v", ok, err)
	}
	rec, err := Baseline(env, "run-a", cfg)
	if err != nil || rec.Outcome != Fail {
		t.Fatalf("Baseline = %s, %v; want a failure", rec.Outcome, err)
	}
	got, ok, err := ReadBaseline(dir, "run-a")
	if !ok || err != nil || got.Outcome != Fail || got.Message != rec.Message {
		t.Errorf("ReadBaseline = %+v, %v, %v", got, ok, err)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, layout.Iterations, "run-a", BaselineLog)); !strings.Contains(string(log), "b broke") {
		t.Errorf("baseline.log does not name the failing test: %q", log)
	}
	data, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(layout.TestsPassed)))
	if names, ok := ratchet.ParseNames("run-a", data); !ok || !slices.Equal(names, []string{"s::a"}) {
		t.Errorf("the tests that passed at the baseline: %q", data)
	}
	if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(layout.GuardCache))); err != nil || !strings.HasPrefix(string(data), cacheHeader) {
		t.Errorf("the private caches' digest after the baseline: %q, %v", data, err)
	}
	if note := RedStart("run-a", got); !strings.Contains(note, "already failing") || !strings.Contains(note, BaselineLog) {
		t.Errorf("RedStart = %q", note)
	}
}

// TestEntryPoints: a Go test file that gains a TestMain or an init since
// the base (new, or more of them than it had) is named once for each; a
// test file that kept its own, a deleted one and a file that is no test
// are not.
func TestEntryPoints(t *testing.T) {
	dir, repo := repoWith(t, map[string]string{
		"a_test.go":    "package a\n\nfunc init() {}\n",
		"kept_test.go": "package a\n\nfunc TestMain(m *testing.M) {}\n",
		"gone_test.go": "package a\n",
	}, "base")
	base := gittest.Run(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{
		"a_test.go":    "package a\n\nfunc init() {}\n\nfunc init() {}\n\nfunc TestMain(m *testing.M) {}\n",
		"kept_test.go": "package a\n\n// changed\nfunc TestMain(m *testing.M) {}\n",
		"new_test.go":  "package a\n\nfunc init() {}\n",
		"main.go":      "package a\n\nfunc init() {}\n",
		"doc_test.go":  "package a\n\n// func init() {}\n",
	})
	os.Remove(filepath.Join(dir, "gone_test.go"))
	notes, err := EntryPoints(repo, base)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a_test.go adds func TestMain", "a_test.go adds func init", "new_test.go adds func init"}
	if len(notes) != len(want) {
		t.Fatalf("notes %q, want %d", notes, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(notes[i], w+":") {
			t.Errorf("note %d = %q, want %q…", i, notes[i], w)
		}
	}
	if _, err := EntryPoints(repo, "no-such-commit"); err == nil {
		t.Error("a base that is no commit read")
	}
}

// TestGuardCaches: before the guard runs, its private caches are emptied
// when they differ from the digest its last run left (saying so), kept
// when they do not, the build outputs a session left among the ignored
// paths are removed, and the guard's toolchains point at the caches; the
// evidence records each.
func TestGuardCaches(t *testing.T) {
	in := cli.NotifyInterrupt()
	defer in.Stop()
	dir, _ := repoWith(t, map[string]string{"README": "x"}, "initial")
	caches := evidence.CachesFor(filepath.Join(dir, ".git"))
	if err := caches.Prepare(); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Sandbox.Mode = config.SandboxNone
	cfg.Guard.Command = []string{"sh", "-c", `echo "GOCACHE=$GOCACHE"; cat > "$RUNNER_TEST_RESULTS/r.xml" <<'EOF'
<testsuite name="s"><testcase classname="s" name="a"/></testsuite>
EOF`}
	run := func(digest string) (iterdir.Guard, string) {
		t.Helper()
		writeFiles(t, dir, map[string]string{"pkg/__pycache__/m.cpython-311.pyc": "forged bytecode"})
		var stderr strings.Builder
		env := &cli.Env{Name: "guard-run", Dir: dir, Stdout: io.Discard, Stderr: &stderr}
		j := Judging{Results: filepath.Join(dir, ".git", "results"), Caches: &caches, CacheDigest: digest, Ignored: []string{"pkg/__pycache__/"}}
		rec, _ := Guard(in, env, cfg, time.Now().Add(time.Minute), filepath.Join(dir, ".git", "guard.log"), j)
		if rec.Evidence == nil || !slices.Equal(rec.Evidence.Removed, []string{"pkg/__pycache__"}) {
			t.Fatalf("evidence %+v: the session's bytecode not removed", rec.Evidence)
		}
		if _, err := os.Stat(filepath.Join(dir, "pkg", "__pycache__")); err == nil {
			t.Error("pkg/__pycache__ is still there")
		}
		return rec, stderr.String()
	}
	writeFiles(t, caches.Root, map[string]string{"go-build/ab/primed-d": "a session's object"})
	rec, warned := run("a digest of other caches")
	if !rec.Evidence.CachesWiped || !strings.Contains(warned, "changed since the guard last ran: emptied") {
		t.Errorf("caches that differ: wiped %v, warned %q", rec.Evidence.CachesWiped, warned)
	}
	if _, err := os.Stat(filepath.Join(caches.Root, "go-build", "ab", "primed-d")); err == nil {
		t.Error("the primed object is still in the cache")
	}
	if log, _ := os.ReadFile(filepath.Join(dir, ".git", "guard.log")); !strings.Contains(string(log), "GOCACHE="+filepath.Join(caches.Root, "go-build")) {
		t.Errorf("the guard's GOCACHE is not the private one: %s", log)
	}
	writeFiles(t, caches.Root, map[string]string{"go-build/cd/kept-d": "the guard's object"})
	digest, err := caches.Digest()
	if err != nil {
		t.Fatal(err)
	}
	rec, warned = run(digest)
	if rec.Evidence.CachesWiped || warned != "" {
		t.Errorf("caches as recorded: wiped %v, warned %q", rec.Evidence.CachesWiped, warned)
	}
	if _, err := os.Stat(filepath.Join(caches.Root, "go-build", "cd", "kept-d")); err != nil {
		t.Errorf("the guard's own object is gone: %v", err)
	}
}

// TestJudgingAtHead: a guard run outside an iteration (the baseline,
// runner-check) is judged by its results when [guard] results is on, the
// private caches against the digest HEAD records (not the work tree's
// copy) and the work tree's ignored paths; with shared caches, or outside
// a repository, by no caches.
func TestJudgingAtHead(t *testing.T) {
	digest := cacheHeader + "0123abcd\n"
	dir, _ := repoWith(t, map[string]string{layout.GuardCache: digest, ".gitignore": "build/\n"}, "initial")
	writeFiles(t, dir, map[string]string{layout.GuardCache: cacheHeader + "forged\n", "build/out.o": "x"})
	cfg := config.Default()
	cfg.Guard.Results = "auto"
	j, err := judgingAtHead(dir, cfg, "/results")
	if err != nil {
		t.Fatal(err)
	}
	if j.Results != "/results" || j.Caches == nil || j.CacheDigest != "0123abcd" || !slices.Equal(j.Ignored, []string{"build/"}) {
		t.Errorf("judging %+v", j)
	}
	cfg.Guard.Results, cfg.Guard.Caches = "off", config.CachesShared
	if j, err := judgingAtHead(dir, cfg, "/results"); err != nil || j.Results != "" || j.Caches != nil || j.Ignored != nil {
		t.Errorf("shared caches, results off: %+v, %v", j, err)
	}
	cfg.Guard.Caches = config.CachesPrivate
	if j, err := judgingAtHead(t.TempDir(), cfg, "/results"); err != nil || j.Caches != nil {
		t.Errorf("outside a repository: %+v, %v", j, err)
	}
}
