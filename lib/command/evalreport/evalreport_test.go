package evalreport

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/eval"
	"github.com/treeloop/treeloop/lib/exit"
)

// summary is an eval summary of one backend over cases, each cell with
// the given successes out of 2 runs.
func summary(id string, passes map[string]int, cases ...string) eval.Summary {
	s := eval.Summary{Version: 1, EvalRunID: id, StartedAt: "2026-01-01T00:00:00Z", EndedAt: "2026-01-01T00:01:00Z",
		Harness: eval.Harness{GoVersion: "go1.26", Tools: map[string]string{}}, Args: []string{}, CaseSetHash: fmt.Sprintf("%x", sha256.Sum256([]byte(strings.Join(cases, ",")))),
		Cases: cases, Backends: []string{"replay"}, Runs: 2, Attempts: 2 * len(cases), Finished: 2 * len(cases)}
	var results []eval.Result
	for _, c := range cases {
		for run := 1; run <= 2; run++ {
			outcome := eval.Fail
			if run <= passes[c] {
				outcome = eval.Success
			}
			results = append(results, eval.Result{Case: c, Backend: "replay", Run: run, Outcome: outcome})
		}
	}
	s.Cells = eval.BuildCells(results, make([]string, len(results)), cases, s.Backends, map[string]string{})
	return s
}

func write(t *testing.T, p string, s eval.Summary) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, eval.Encode(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(dir string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(append([]string{"-C", dir}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// A and B are eval run ids looked up in --results, or summary files; the
// comparison warns when the case sets differ and reports the rest, as
// Markdown or JSON.
func TestResolvesRunsAndFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "eval/results/summary-e1.json"), summary("e1", map[string]int{"x": 0, "y": 2}, "x", "y"))
	write(t, filepath.Join(dir, "elsewhere/e2.json"), summary("e2", map[string]int{"x": 2}, "x"))
	code, out, errs := run(dir, "e1", "elsewhere/e2.json")
	if code != exit.OK {
		t.Fatalf("exit %d %q", code, errs)
	}
	if !strings.Contains(errs, "warning: the case sets differ: only in e1: y") {
		t.Errorf("stderr %q: want the case sets' warning", errs)
	}
	if !strings.Contains(out, "e1") || !strings.Contains(out, "e2") || !strings.Contains(out, "| x ") {
		t.Errorf("markdown %q: want both runs and case x", out)
	}
	code, out, _ = run(dir, "--json", "e1", "elsewhere/e2.json")
	if code != exit.OK || !strings.HasPrefix(out, "{") || !strings.Contains(out, `"x"`) {
		t.Fatalf("--json: exit %d %q", code, out)
	}
	// --results moves the lookup of run ids.
	write(t, filepath.Join(dir, "other/summary-e3.json"), summary("e3", map[string]int{"x": 1}, "x"))
	if code, _, errs := run(dir, "--results", "other", "e3", "e3"); code != exit.OK {
		t.Fatalf("--results: exit %d %q", code, errs)
	}
}

// A summary that cannot be read, or is no eval summary, is a negative
// answer (exit 1) naming the file.
func TestUnreadableSummary(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "eval/results/summary-e1.json"), summary("e1", map[string]int{"x": 1}, "x"))
	if code, _, errs := run(dir, "e1", "nope"); code != exit.Negative || !strings.Contains(errs, "summary-nope.json") {
		t.Fatalf("an unknown run: exit %d %q", code, errs)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"version": 1}`), 0o644)
	if code, _, errs := run(dir, "e1", "bad.json"); code != exit.Negative || !strings.Contains(errs, "bad.json: not an eval summary") {
		t.Fatalf("not a summary: exit %d %q", code, errs)
	}
}
