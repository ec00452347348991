package guardrun

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/cli"
	"github.com/treeloop/treeloop/lib/config"
	"github.com/treeloop/treeloop/lib/exit"
	"github.com/treeloop/treeloop/lib/git"
	"github.com/treeloop/treeloop/lib/internal/gittest"
	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/ratchet"
	"github.com/treeloop/treeloop/lib/stepctx"
	"github.com/treeloop/treeloop/lib/tree"
)

// judgingRepo is a repository whose base commit holds README; the work
// tree then changes README, adds new.txt and an ignored build/. It
// returns the root and the base.
func judgingRepo(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	gittest.Setenv(t, dir)
	gittest.Run(t, dir, "init", "-q", "-b", "main")
	for p, data := range map[string]string{"README": "a\n", ".gitignore": "build/\n"} {
		os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644)
	}
	gittest.Run(t, dir, "add", "-A")
	gittest.Run(t, dir, "commit", "-q", "-m", "base")
	base := gittest.Run(t, dir, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(dir, "README"), []byte("b\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("new\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "build"), 0o755)
	os.WriteFile(filepath.Join(dir, "build", "out"), []byte("x"), 0o644)
	return dir, base
}

// judgingTree is the tree at the base: leaf "a" (evidence as given) under
// the root.
func judgingTree(evidence string) []byte {
	a := &tree.Node{ID: "a", Order: 1, Title: "A", Goal: "g", Acceptance: []string{}, Next: tree.NextExecute, Evidence: evidence, MaxAttempts: 3, Children: []*tree.Node{}}
	return tree.Encode(&tree.Node{ID: "root", Title: "R", Goal: "g", Acceptance: []string{}, Next: tree.NextDecompose, MaxAttempts: 3, Children: []*tree.Node{a}})
}

// TestJudging: what guard-run judges the guard by: the results directory
// when [guard] results is on; the private caches with the digest the
// base records; the changes since the base and the ignored paths for an
// execute leaf's witness (its level from the node), or the ignored paths
// alone for the build outputs; no witness for a decomposition, with
// results off, or without a base; a witness needed and no tree at the
// base is a runner error.
func TestJudging(t *testing.T) {
	dir, base := judgingRepo(t)
	env := &cli.Env{Name: "guard-run", Dir: dir, Stdout: io.Discard, Stderr: io.Discard}
	digest := git.File{Path: layout.GuardCache, Data: []byte("# treeloop: the guard's private caches after its last run\nabc\n"), OK: true}
	iteration := func(mode, evidence string, results bool) (cfgIt cfgIteration) {
		cfg := config.Default()
		cfg.Guard.Results = "off"
		if results {
			cfg.Guard.Results = config.ResultsAuto
		}
		return cfgIteration{cfg: cfg, mode: mode, files: []git.File{digest, {Path: layout.Tree, Data: judgingTree(evidence), OK: true}, {Path: ".gitmodules"}}}
	}
	for _, c := range []struct {
		name    string
		it      cfgIteration
		based   bool
		witness string // the witness's level, "" for none
		changed bool   // the changes since the base listed (with a base: what the guard's run is compared by)
	}{
		{"an execute leaf", iteration(tree.NextExecute, "", true), true, tree.EvidenceWitness, true},
		{"an execute leaf at level suite", iteration(tree.NextExecute, tree.EvidenceSuite, true), true, tree.EvidenceSuite, true},
		{"a decomposition", iteration(tree.NextDecompose, "", true), true, "", true},
		{"results off", iteration(tree.NextExecute, "", false), true, "", true},
		{"no base", iteration(tree.NextExecute, "", true), false, "", false},
	} {
		j, err := judging(env, c.it.iteration(dir, base), c.based)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := j.Results != ""; got != c.it.cfg.Guard.EvidenceOn() {
			t.Errorf("%s: results %q", c.name, j.Results)
		}
		if (j.Witness != nil) != (c.witness != "") || j.Witness != nil && (j.Witness.Level != c.witness || j.Witness.NodeID != "a" || j.Witness.StepBase != base) {
			t.Errorf("%s: witness %+v, want level %q", c.name, j.Witness, c.witness)
		}
		if c.changed != slices.Equal(j.Changed, []string{"README", "new.txt"}) {
			t.Errorf("%s: changed %q", c.name, j.Changed)
		}
		if c.based != (j.Caches != nil && j.CacheDigest == "abc" && slices.Equal(j.Ignored, []string{"build/"})) {
			t.Errorf("%s: caches %v, digest %q, ignored %q", c.name, j.Caches, j.CacheDigest, j.Ignored)
		}
	}
	it := iteration(tree.NextExecute, "", true)
	it.files[1] = git.File{Path: layout.Tree}
	if _, err := judging(env, it.iteration(dir, base), true); exit.Code(err) != exit.RunnerError || !strings.Contains(err.Error(), "to judge the node's witness: it is not there") {
		t.Errorf("no tree at the base: %v", err)
	}
}

// cfgIteration is a stepctx.Iteration in the making.
type cfgIteration struct {
	cfg   config.Config
	mode  string
	files []git.File
}

func (c cfgIteration) iteration(dir, base string) stepctx.Iteration {
	return stepctx.Iteration{Dir: filepath.Join(dir, ".runner", "iterations", "run-a", "0001"),
		Begin:  iterdir.Begin{Version: 1, RunID: "run-a", NodeID: "a", Mode: c.mode},
		Config: c.cfg, Base: base, AtBase: c.files}
}

// TestRatchetKeepsNamesAfterFail: a guard run that failed leaves the
// run's list of tests that must keep passing as it was, however many of
// its tests passed; a pass that stands replaces it with the pass's.
func TestRatchetKeepsNamesAfterFail(t *testing.T) {
	dir, base := judgingRepo(t)
	env := &cli.Env{Name: "guard-run", Dir: dir, Stdout: io.Discard, Stderr: io.Discard}
	it := cfgIteration{cfg: config.Default(), mode: tree.NextExecute}.iteration(dir, base)
	if err := os.MkdirAll(it.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	best := ratchet.FormatNames("run-a", []string{"p::TestA", "p::TestB"})
	names := filepath.Join(dir, filepath.FromSlash(layout.TestsPassed))
	os.MkdirAll(filepath.Dir(names), 0o755)
	if err := os.WriteFile(names, best, 0o644); err != nil {
		t.Fatal(err)
	}
	o := &Options{Iter: it.Dir}
	o.Base.Base = base
	failed := iterdir.Guard{Outcome: Fail, Ratchet: &iterdir.Ratchet{Failed: []string{"p::TestB"}, Passed: []string{"p::TestA"}}}
	if err := o.report(env, failed, exit.Negative, it); exit.Code(err) != exit.Negative {
		t.Fatalf("a failed run: %v", err)
	}
	if got, _ := os.ReadFile(names); string(got) != string(best) {
		t.Errorf("a failed run rewrote %s: %q", layout.TestsPassed, got)
	}
	passed := iterdir.Guard{Outcome: Pass, Ratchet: &iterdir.Ratchet{Held: true, Passed: []string{"p::TestA", "p::TestB", "p::TestC"}}}
	if err := o.report(env, passed, exit.OK, it); err != nil {
		t.Fatalf("a pass: %v", err)
	}
	if got, _ := os.ReadFile(names); string(got) != string(ratchet.FormatNames("run-a", passed.Ratchet.Passed)) {
		t.Errorf("a pass left %s: %q", layout.TestsPassed, got)
	}
}
