package testscripts

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The suite has two tiers (docs/development.md). `just test` runs
// `go test -short ./...`: the unit tests and, here, the core scripts, a
// contributor's inner loop. `just ci` (README's test command, and CI's)
// runs `go test ./...`: every script, the browser tests, the real agent
// CLIs and the recipes.

// coreScripts are the scripts the short tier runs: every plumbing command
// and the porcelain through its main paths, each script a quick one.
// Everything else is the ci tier's.
var coreScripts = []string{
	"tree-validate-valid",         // tree-validate: a valid tree, --json, the schema copy
	"tree-validate-invariants",    // tree-validate: every invariant error, by path
	"tree-select-open",            // tree-select: the leftmost open leaf
	"tree-update-done",            // tree-update: a pass and a derived parent pass
	"tree-update-outcomes",        // tree-update: timed out, interrupted, agent error
	"context-write-budget",        // context-write: the prompt pack and its budget
	"iter-log-begin-end",          // iter-log: begin and end of an iteration
	"guard-run-outcomes",          // guard-run: pass, fail, cannot start, timeout
	"agent-exec-policy",           // agent-exec: protected paths and runner-owned files
	"loop-commit-refusals",        // loop-commit: the branch and the one commit
	"step-end",                    // step-end on its own
	"runner-init-start",           // runner-init and runner-start
	"loop-decompose-execute-pass", // runner-loop: decompose, execute, pass, complete
	"loop-guard-fail-retry",       // runner-step: a failed guard and its retry
	"runner-step-recover",         // runner-step: a killed step recovered
	"tree-edit-add",               // tree-edit: an operator's add through the hook
}

// scriptFiles is the scripts TestScripts runs, in the order they start
// (scriptOrder): all of them, or in the short tier the core ones.
func scriptFiles() (files []string) {
	if !testing.Short() {
		all, err := filepath.Glob("*.txtar")
		if err != nil {
			panic(err) // only a malformed pattern
		}
		return scriptOrder(all)
	}
	for _, name := range coreScripts {
		files = append(files, name+".txtar")
	}
	return scriptOrder(files)
}

// ciTier skips t in the short tier: `just ci` runs it.
func ciTier(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the ci tier's (just ci): `go test -short` runs the core scripts only")
	}
}

// TestCoreScriptsExist holds the short tier's list to the scripts on
// disk: a renamed or deleted script fails here, not silently nowhere.
func TestCoreScriptsExist(t *testing.T) {
	t.Parallel()
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".txtar"); ok {
			all = append(all, name)
		}
	}
	for _, name := range coreScripts {
		if !slices.Contains(all, name) {
			t.Errorf("core script %s: no %s", name, filepath.Join("testscripts", name+".txtar"))
		}
	}
	if len(coreScripts) == 0 || len(coreScripts) >= len(all) {
		t.Errorf("%d core scripts of %d: the short tier must be a part of the suite", len(coreScripts), len(all))
	}
}

// TestTiersInJustfile holds the justfile to what README and
// docs/development.md say of the tiers: `just test` runs go test -short,
// `just ci` runs test-all, every test without -short.
func TestTiersInJustfile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot(), "justfile"))
	if err != nil {
		t.Fatal(err)
	}
	recipes := map[string][]string{} // recipe line -> its body's lines
	var cur string
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "    ") && cur != "":
			recipes[cur] = append(recipes[cur], strings.TrimSpace(l))
		case l != "" && !strings.HasPrefix(l, "#") && strings.Contains(l, ":") && !strings.Contains(l, ":="):
			cur = l
			recipes[cur] = nil
		default:
			cur = ""
		}
	}
	body := func(prefix string) (head string, lines []string) {
		for h, b := range recipes {
			if strings.HasPrefix(h, prefix) {
				return h, b
			}
		}
		t.Fatalf("justfile: no recipe %q", prefix)
		return "", nil
	}
	// Both tiers run under tools/test-scratch (TMPDIR in memory where the
	// machine has room).
	scratch := func(b []string) []string {
		if len(b) == 1 {
			return []string{strings.TrimPrefix(b[0], "tools/test-scratch ")}
		}
		return b
	}
	if _, b := body("test:"); len(b) != 1 || !strings.HasPrefix(b[0], "tools/test-scratch ") || !strings.HasPrefix(scratch(b)[0], "go test -short ") {
		t.Errorf("just test runs %q, want go test -short", b)
	}
	if h, _ := body("ci:"); !slices.Contains(strings.Fields(h), "test-all") || slices.Contains(strings.Fields(h), "test") {
		t.Errorf("just ci is %q, want it to run test-all (every test), not test", h)
	}
	if _, b := body("test-all:"); len(b) != 1 || !strings.HasPrefix(b[0], "tools/test-scratch ") || !strings.HasPrefix(scratch(b)[0], "go test ") || strings.Contains(b[0], "-short") {
		t.Errorf("just test-all runs %q, want go test without -short", b)
	}
}
