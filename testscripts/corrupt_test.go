package testscripts

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A corrupt state file never makes a shipped command panic or fail
// silently: every command that reads it (the built binaries, on a real
// run) either refuses with one line, `<tool>: …`, that names the file, or
// goes on and says in one line which file it passed over. Each state file
// is corrupted three ways: cut short (not JSON or TOML), the wrong shape
// (valid syntax, refused by its schema), and emptied.

// corruption turns a good file's bytes into bad ones.
type corruption struct {
	name string
	json func([]byte) []byte // for JSON files
	toml func([]byte) []byte // for TOML files
}

var corruptions = []corruption{
	{"cut short", func(b []byte) []byte { return b[:len(b)/2] }, func(b []byte) []byte { return append(b, "\n[agent\n"...) }},
	{"wrong shape", func([]byte) []byte { return []byte(`{"version": "one", "children": 7}` + "\n") }, func(b []byte) []byte { return append(b, "\nmax_iterations_typo = 1\n"...) }},
	{"empty", func([]byte) []byte { return nil }, func(b []byte) []byte { return []byte("max_iterations = \"many\"\n") }},
}

// stateReader is a command run on a fixture whose file is corrupt.
type stateReader struct {
	file string     // the corrupted file, relative to the fixture
	dir  string     // where the command runs, relative to the fixture
	argv []string   // the command
	prep [][]string // commands run in dir before the file is corrupted
	how  answer     // how the command words a refusal
}

// answer says where a command words what it refused.
type answer int

const (
	oneLine    answer = iota // one line on stderr, `<tool>: …`
	everyLine                // every problem a line on stderr naming the file (tree-validate)
	reportLine               // a line of its report on stdout (runner-check), nothing on stderr
	amidLines                // a line on stderr among its progress lines (eval-run)
)

// stateReaders lists, for every state file, the commands that read it.
func stateReaders() []stateReader {
	const (
		tree     = "repo/.runner/state/tree.json"
		runSt    = "repo/.runner/state/run_state.json"
		config   = "repo/.runner/state/config.toml"
		record   = "repo/.runner/runs/run-c.json"
		meta     = "repo/.runner/iterations/run-c/0001/meta.json"
		iter3    = ".runner/iterations/run-c/0003"
		agentJS3 = "repo/" + iter3 + "/agent.json"
		summary  = "evalhome/eval/results/summary-e1.json"
		result   = "evalhome/eval/results/one/e1/scripted/1/meta.json"
	)
	var rs []stateReader
	add := func(file, dir string, argvs ...[]string) {
		for _, a := range argvs {
			r := stateReader{file: file, dir: dir, argv: a}
			switch a[0] {
			case "tree-validate", "runner-step":
				// Every problem of the tree is a line (the step passes
				// tree-validate's on).
				r.how = everyLine
			case "runner-check":
				r.how = reportLine
			case "eval-run":
				r.how = amidLines
			}
			rs = append(rs, r)
		}
	}
	add(tree, "repo",
		[]string{"tree-validate"}, []string{"tree-select"}, []string{"tree-select", "--get", "id"},
		[]string{"runner-status"}, []string{"runner-status", "--json"}, []string{"iter-log", "begin", "--selected", "root"},
		[]string{"tree-edit", "retry", "root"}, []string{"runner-start"}, []string{"runner-step"},
		[]string{"runner-export", "--pr-body", "pr.md"})
	add(runSt, "repo",
		[]string{"runner-status"}, []string{"iter-log", "begin", "--selected", "root"}, []string{"loop-commit", "check"},
		[]string{"runner-start"}, []string{"runner-record", "begin", "--pid", "1"}, []string{"runner-step"},
		[]string{"runner-export"})
	add(config, "repo",
		[]string{"runner-check"}, []string{"runner-status"}, []string{"tree-select"}, []string{"iter-log", "begin", "--selected", "root"},
		[]string{"runner-start"}, []string{"runner-step"})
	add(record, "repo",
		[]string{"runner-status"}, []string{"runner-status", "--runs"}, []string{"runner-record", "begin", "--pid", "1"},
		[]string{"runner-record", "update", "--record", "run-c"}, []string{"runner-record", "end", "--record", "run-c", "--status", "error", "--reason", "test"})
	add(meta, "repo",
		[]string{"iter-log", "list"}, []string{"iter-log", "show", "1"}, []string{"runner-status"})
	// agent.json is read when its iteration ends (once the session it
	// records is over); a finished iteration's meta.json holds its copy.
	rs = append(rs, stateReader{file: agentJS3, dir: "repo", argv: []string{"iter-log", "end", "--iter", iter3}, prep: [][]string{
		{"iter-log", "begin", "--selected", "root"}, {"context-write", "--iter", iter3}, {"agent-exec", "--iter", iter3},
	}})
	add(summary, "evalhome", []string{"eval-report", "e1", "e2"})
	add(result, "evalhome", []string{"eval-run", "--replay", "e1"}, []string{"eval-run", "--resume", "e1"})
	return rs
}

func TestCorruptStateFiles(t *testing.T) {
	t.Parallel()
	ciTier(t)
	trackSources(t)
	fixture := corruptFixture(t)
	for _, r := range stateReaders() {
		for _, c := range corruptions {
			name := fmt.Sprintf("%s/%s/%s", filepath.Base(r.file), c.name, strings.Join(r.argv, " "))
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				work := filepath.Join(t.TempDir(), "w")
				if err := os.Mkdir(work, 0o755); err != nil {
					t.Fatal(err)
				}
				// Of the fixture's two homes, only the one r runs in:
				// the eval home is the larger, and most readers run in
				// the repository.
				var from []string
				for _, name := range []string{"goal.md", "agent", "home", r.dir} {
					from = append(from, filepath.Join(fixture, name))
				}
				if out, err := exec.Command("cp", append(append([]string{"-a"}, from...), work)...).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v: %s", err, out)
				}
				for _, p := range r.prep {
					runIn(t, filepath.Join(work, r.dir), p...)
				}
				path := filepath.Join(work, r.file)
				good, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				bad := c.json
				if strings.HasSuffix(path, ".toml") {
					bad = c.toml
				}
				if err := os.WriteFile(path, bad(good), 0o644); err != nil {
					t.Fatal(err)
				}
				if strings.Contains(r.file, "/.runner/state/") {
					// Committed, as a corrupt file reaches a run: the step
					// refuses a dirty work tree before it reads anything.
					runIn(t, filepath.Join(work, "repo"), "git", "commit", "-qam", "corrupt")
				}
				checkCorruptRead(t, filepath.Join(work, r.dir), r, filepath.Base(r.file))
			})
		}
	}
}

// checkCorruptRead runs r's command in dir and holds its answer to a
// corrupt file named base: no panic, and the line r.how says, naming the
// file.
func checkCorruptRead(t *testing.T, dir string, r stateReader, base string) {
	t.Helper()
	cmd := exec.Command(r.argv[0], r.argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), corruptEnv(filepath.Dir(dir))...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if s := stderr.String(); strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
		t.Fatalf("exit %d, it panicked:\n%s", code, firstLines(s, 12))
	}
	errs, outs := nonEmptyLines(stderr.String()), nonEmptyLines(stdout.String())
	naming := func(lines []string) (n int) {
		for _, l := range lines {
			if strings.Contains(l, base) {
				n++
			}
		}
		return n
	}
	switch {
	case r.how == reportLine && (len(errs) != 0 || naming(outs) != 1):
		t.Errorf("exit %d: want one report line naming %s and nothing on stderr:\n%s\n%s", code, base, stdout.String(), stderr.String())
	case r.how == everyLine && (len(errs) == 0 || naming(errs) != len(errs)):
		t.Errorf("exit %d: want every stderr line to name %s:\n%s", code, base, stderr.String())
	case r.how == amidLines && naming(errs) != 1:
		t.Errorf("exit %d: want one stderr line naming %s:\n%s", code, base, stderr.String())
	case r.how == oneLine && (len(errs) != 1 || naming(errs) != 1):
		t.Errorf("exit %d: want one stderr line naming %s:\n%s", code, base, stderr.String())
	}
	for _, l := range errs {
		if strings.Contains(l, base) && !toolLine.MatchString(l) {
			t.Errorf("exit %d: not a `<tool>: …` line: %s", code, l)
		}
	}
}

// toolLine is a diagnostic of a treeloop command (a porcelain's plumbing's
// included): `<tool>: …`.
var toolLine = regexp.MustCompile(`^(?:runner|tree|iter|loop|agent|guard|context|eval)-[a-z]+: \S`)

// nonEmptyLines are the lines of s that are not empty.
func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// runIn runs argv in dir with the fixture's environment, failing the test
// when it fails.
func runIn(t *testing.T, dir string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), corruptEnv(filepath.Dir(dir))...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// corruptEnv is the environment of the fixture's commands: git's identity
// and its own HOME.
func corruptEnv(work string) []string {
	return []string{
		"HOME=" + filepath.Join(work, "home"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
		"RUNNER_AGENT_BIN=" + filepath.Join(work, "agent"), "LC_ALL=C", "NO_COLOR=1",
	}
}

// corruptFixture makes, once, a repository with a started run, two
// iterations and a run record, and an eval home with two eval runs, e1
// and e2, of one case; it returns its directory.
func corruptFixture(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	files := map[string]string{
		"goal.md":       "# Corrupt\n\nNever done.\n",
		"agent":         "#!/bin/sh\ncat >/dev/null\necho '{\"status\":\"retry\",\"summary\":\"not yet\",\"children\":[]}' > \"$RUNNER_OUTPUT\"\n",
		"repo/justfile": "ci:\n    @true\n",
		"home/.keep":    "",
		"evalhome/eval/cases/one.toml": "[case]\nid = \"one\"\ngoal = \"# One\\n\\nDone at once.\"\nfixture = \"fx\"\nroot_next = \"execute\"\n" +
			"[backends.scripted]\nbackend = \"command\"\nbin = \"agents/done\"\n[[checks]]\ntype = \"runner_completed\"\n",
		"evalhome/eval/cases/fx/justfile": "ci:\n    @true\n",
		"evalhome/eval/cases/agents/done": "#!/bin/sh\ncat >/dev/null\necho '{\"status\":\"done\",\"summary\":\"done\",\"children\":[]}' > \"$RUNNER_OUTPUT\"\n",
	}
	for name, data := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir string, argv ...string) {
		t.Helper()
		runIn(t, filepath.Join(work, dir), argv...)
	}
	run("repo", "git", "init", "-q", "-b", "main")
	run("repo", "git", "add", "-A")
	run("repo", "git", "commit", "-qm", "initial")
	run("repo", "runner-init", "--goal", "../goal.md", "--next", "execute")
	run("repo", "runner-start", "--id", "run-c")
	run("repo", "runner-step")
	run("repo", "runner-step")
	run("evalhome", "git", "init", "-q", "-b", "main")
	run("evalhome", "eval-run", "--id", "e1")
	run("evalhome", "eval-run", "--id", "e2")
	if _, err := os.Stat(filepath.Join(work, "evalhome/eval/results/one/e1/scripted/1/cassette")); err != nil {
		t.Fatalf("the fixture's eval recorded no session: %v", err)
	}
	return work
}
