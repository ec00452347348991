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
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/tree"
)

// shRunner is a guard that runs every tests/*.sh, reports each as the test
// "<file>::t" in JUnit XML in $RUNNER_TEST_RESULTS, and fails when one
// fails.
const shRunner = `set -u
status=0
{ echo '<testsuite name="sh">'
for f in tests/*.sh; do
  if sh "$f" >/dev/null 2>&1; then
    echo "<testcase classname=\"$f\" name=\"t\"/>"
  else
    echo "<testcase classname=\"$f\" name=\"t\"><failure message=\"$f failed\"/></testcase>"
  fi
done
echo '</testsuite>'; } > "$RUNNER_TEST_RESULTS/r.xml"
for f in tests/*.sh; do sh "$f" >/dev/null 2>&1 || status=1; done
exit $status
`

// witnessCase is one node's work for TestWitness: the files it writes
// over the base (impl.sh prints "old", tests/old.sh passes on it), the
// level that asks for a witness and [guard] witness, and the verdict.
type witnessCase struct {
	name    string
	work    map[string]string
	earlier map[string]string // committed by the node's earlier attempt, before the step's base
	level   string
	witness []string // [guard] witness; nil: the guard's command
	mode    string   // [sandbox] mode; "" for none
	outcome string
	says    string
	tests   []string // the witnesses recorded
}

// TestWitness: an execute leaf's green guard passes only with a witness,
// a test of its test files that fails on the code its work began from (in
// a scratch checkout, with the node's test files laid over it) and passes
// on the new code; real git, a real scratch, a real runner of shell tests.
// A node with no test file, or whose new test passes on the old code too,
// fails; a test the node's earlier attempt committed is judged from the
// commit its work began from; one at level suite needs none; a witness command that cannot
// start is a runner error. Under bwrap, the witness runs confined beside
// the guard.
func TestWitness(t *testing.T) {
	in := cli.NotifyInterrupt()
	defer in.Stop()
	newTest := map[string]string{"impl.sh": "echo new\n", "tests/new.sh": "[ \"$(sh impl.sh)\" = new ]\n"}
	for _, c := range []witnessCase{
		{name: "honest", work: newTest, level: tree.EvidenceWitness, outcome: Pass, tests: []string{"tests/new.sh::t"}},
		{name: "honest under bwrap", work: newTest, level: tree.EvidenceWitness, mode: config.SandboxBwrap, outcome: Pass, tests: []string{"tests/new.sh::t"}},
		{name: "no test file", work: map[string]string{"impl.sh": "echo new\n"}, level: tree.EvidenceWitness,
			outcome: Fail, says: "no test file among this node's changes"},
		{name: "a test that passes before", work: map[string]string{"impl.sh": "echo new\n", "tests/new.sh": "true\n"}, level: tree.EvidenceWitness,
			outcome: Fail, says: "already passing before: tests/new.sh::t"},
		{name: "a test from the node's earlier attempt", earlier: map[string]string{"tests/new.sh": newTest["tests/new.sh"]},
			work: map[string]string{"impl.sh": "echo new\n"}, level: tree.EvidenceWitness, outcome: Pass, tests: []string{"tests/new.sh::t"}},
		{name: "level suite", work: map[string]string{"impl.sh": "echo new\n"}, level: tree.EvidenceSuite, outcome: Pass},
		{name: "witness cannot start", work: newTest, level: tree.EvidenceWitness, witness: []string{"/nonexistent/treeloop-witness"},
			outcome: Error, says: "the witness could not start"},
	} {
		t.Run(c.name, func(t *testing.T) { runWitnessCase(t, in, c) })
	}
}

func runWitnessCase(t *testing.T, in *cli.Interrupt, c witnessCase) {
	dir, repo := repoWith(t, map[string]string{"impl.sh": "echo old\n", "tests/old.sh": "[ \"$(sh impl.sh)\" = old ] || [ \"$(sh impl.sh)\" = new ]\n"}, "base")
	base := gittest.Run(t, dir, "rev-parse", "HEAD")
	stepBase := base
	if c.earlier != nil {
		writeFiles(t, dir, c.earlier)
		gittest.Run(t, dir, "add", "-A")
		gittest.Run(t, dir, "commit", "-q", "-m", "chore(loop): run run-a iter 1 node root.1 status=retry guard=fail")
		stepBase = gittest.Run(t, dir, "rev-parse", "HEAD")
	}
	writeFiles(t, dir, c.work)
	changed, ignored, err := repo.ChangesSince(stepBase)
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Sandbox.Mode = config.SandboxNone
	if c.mode != "" {
		cfg.Sandbox.Mode = c.mode
	}
	cfg.Guard.Command = []string{"sh", "-c", shRunner}
	cfg.Guard.Witness = c.witness
	cfg.Guard.TestFiles = []string{"tests/*.sh"}
	iter := filepath.Join(dir, ".runner", "iterations", "run-a", "0001")
	if err := os.MkdirAll(iter, 0o755); err != nil {
		t.Fatal(err)
	}
	caches := evidence.CachesFor(filepath.Join(dir, ".git"))
	j := Judging{
		Results: filepath.Join(iter, "results"), Changed: changed, Ignored: ignored, Caches: &caches,
		Best:    Best{Names: []string{"tests/old.sh::t"}},
		Witness: &Witness{Repo: repo, GitDir: filepath.Join(dir, ".git"), RunID: "run-a", NodeID: "root.1", StepBase: stepBase, Level: c.level, LevelFrom: "test"},
	}
	env := &cli.Env{Name: "guard-run", Dir: dir, Stdout: io.Discard, Stderr: io.Discard}
	rec, code := Guard(in, env, cfg, time.Now().Add(time.Minute), filepath.Join(iter, "guard.log"), j)
	if rec.Outcome != c.outcome || (code == exit.OK) != (c.outcome == Pass) || !strings.Contains(rec.Message, c.says) {
		t.Fatalf("outcome %s, code %d, message %q; want %s saying %q", rec.Outcome, code, rec.Message, c.outcome, c.says)
	}
	ev := rec.Evidence
	if ev == nil || ev.Level != c.level || ev.Held != (c.outcome == Pass) {
		t.Fatalf("evidence %+v", ev)
	}
	checkWitnessRecord(t, c, ev, base)
}

func checkWitnessRecord(t *testing.T, c witnessCase, ev *iterdir.Evidence, base string) {
	t.Helper()
	if c.level != tree.EvidenceWitness {
		if ev.Witness != nil {
			t.Errorf("a witness at level %s: %+v", c.level, ev.Witness)
		}
		return
	}
	w := ev.Witness
	if w == nil {
		t.Fatal("no witness record")
	}
	if !slices.Equal(w.Tests, c.tests) {
		t.Errorf("witnesses %q, want %q", w.Tests, c.tests)
	}
	if c.outcome == Pass && (!slices.Equal(w.Files, []string{"tests/new.sh"}) || w.NodeBase != base) {
		t.Errorf("witness files %q from %s, want tests/new.sh from %s", w.Files, w.NodeBase, base)
	}
	if c.outcome == Pass && (w.BaseExit != 1 || w.BaseTests != 2) {
		t.Errorf("the base run: exit %d, %d tests; want 1, 2", w.BaseExit, w.BaseTests)
	}
}

// TestBeside: the witness's base run goes beside the guard's only when a
// witness is asked for with results on, and no container engine confines
// the guard.
func TestBeside(t *testing.T) {
	w := &Witness{Level: tree.EvidenceWitness}
	cfg := config.Default()
	cfg.Sandbox.Mode = config.SandboxBwrap
	for _, c := range []struct {
		name string
		j    Judging
		mode string
		gd   bool
		want bool
	}{
		{"bwrap", Judging{Results: "r", Witness: w}, config.SandboxBwrap, true, true},
		{"docker confines the guard", Judging{Results: "r", Witness: w}, config.SandboxDocker, true, false},
		{"docker, the guard unconfined", Judging{Results: "r", Witness: w}, config.SandboxDocker, false, true},
		{"no results", Judging{Witness: w}, config.SandboxNone, true, false},
		{"no witness", Judging{Results: "r"}, config.SandboxNone, true, false},
		{"level suite", Judging{Results: "r", Witness: &Witness{Level: tree.EvidenceSuite}}, config.SandboxNone, true, false},
	} {
		cfg.Sandbox.Mode, cfg.Sandbox.Guard = c.mode, c.gd
		if got := beside(cfg, c.j); got != c.want {
			t.Errorf("%s: beside %v, want %v", c.name, got, c.want)
		}
	}
}
