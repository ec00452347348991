package runnerrecord

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
)

// TestDecide is runner-loop's decision table, row by row.
func TestDecide(t *testing.T) {
	const (
		waitingOut = "step: id=a path=1 next=execute attempts=1/3"
		stuckOut   = "step: status=stuck id=root path=root next=decompose attempts=4/4"
		errLine    = "step: run=run-r iter=7 node=a status=runner_error guard=skipped"
	)
	summaries := map[string]string{"run-r/7": "context-write failed: disk full"}
	summary := func(run string, n int) (string, bool) {
		s, ok := summaries[run+"/"+strconv.Itoa(n)]
		return s, ok
	}
	type want struct{ action, line, reason, status, cancel, exit string }
	stop := func(code, line, reason string) want { return want{actStop, line, reason, "", "", code} }
	cases := []struct {
		name string
		in   decideInput
		want want
	}{
		{"committed", decideInput{code: 0, steps: 1}, want{action: actContinue}},
		{"agent error", decideInput{code: 5, steps: 1}, want{action: actContinue}},
		{"complete", decideInput{code: 2, steps: 3}, stop("0", "loop: complete steps=3", "the tree is complete after 3 steps")},
		{"complete one step", decideInput{code: 2, steps: 1}, stop("0", "loop: complete steps=1", "the tree is complete after 1 step")},
		{"stuck", decideInput{code: 3, out: stuckOut, steps: 2}, stop("3", "loop: stuck status=stuck id=root path=root next=decompose attempts=4/4", "id=root path=root next=decompose attempts=4/4")},
		{"waiting", decideInput{code: 7, out: waitingOut, steps: 2}, stop("7", "loop: waiting id=a path=1 next=execute attempts=1/3",
			"every open leaf waits for an operator's answer (tree-edit answer, then runner-loop)")},
		{"waiting --wait", decideInput{code: 7, out: waitingOut, steps: 2, wait: true},
			want{action: actAwait, line: "loop: waiting id=a path=1 next=execute attempts=1/3"}},
		{"paused", decideInput{code: 8, steps: 2}, want{action: actPause}},
		{"paused --wait", decideInput{code: 8, steps: 2, wait: true}, want{action: actPause}},
		{"paused --no-pause", decideInput{code: 8, steps: 2, noPause: true}, stop("8", "loop: paused steps=2",
			"a usage limit or an outage ended the session (runner-loop --no-pause): runner-loop again after its reset")},
		{"limit no reason", decideInput{code: 4, out: "step: limit", steps: 5}, stop("4", "loop: limit reason=max-iterations steps=5", "max-iterations")},
		{"limit reason", decideInput{code: 4, out: "step: limit reason=budget-usd spent=3.20", steps: 5},
			stop("4", "loop: limit reason=budget-usd steps=5", "budget-usd")},
		{"limit last reason, tab", decideInput{code: 4, out: "limit reason=a limit reason=max-pause\tx", steps: 0},
			stop("4", "loop: limit reason=max-pause steps=0", "max-pause")},
		{"timeout", decideInput{code: 124, out: "step: run=run-r iter=2 node=a status=timeout guard=skipped", steps: 2},
			stop("124", "loop: timeout steps=2", "the iteration timed out: run=run-r iter=2 node=a status=timeout guard=skipped")},
		{"SIGINT", decideInput{code: 130, steps: 1}, stop("130", "loop: interrupted reason=SIGINT steps=1", "interrupted by SIGINT after 1 step")},
		{"SIGTERM", decideInput{code: 143, steps: 2}, stop("143", "loop: interrupted reason=SIGTERM steps=2", "interrupted by SIGTERM after 2 steps")},
		{"cancel file", decideInput{code: 130, steps: 2, canceled: true},
			want{actStop, "loop: interrupted reason=cancel-file steps=2", "canceled by .runner/cancel after 2 steps", "canceled", "1", "130"}},
		{"cancel file, exit 143", decideInput{code: 143, steps: 0, canceled: true},
			want{actStop, "loop: interrupted reason=cancel-file steps=0", "canceled by .runner/cancel after 0 steps", "canceled", "1", "143"}},
		{"signal wins over the cancel file", decideInput{code: 130, steps: 2, canceled: true, signaled: 143},
			stop("143", "loop: interrupted reason=SIGTERM steps=2", "interrupted by SIGTERM after 2 steps")},
		{"error", decideInput{code: 6, steps: 2, summary: summary}, stop("6", "loop: error exit=6 steps=2", "runner-step failed with exit 6 after 2 steps")},
		{"refused", decideInput{code: 1, steps: 0}, stop("1", "loop: error exit=1 steps=0", "runner-step failed with exit 1 after 0 steps")},
		{"runner error", decideInput{code: 6, committed: errLine, steps: 2, summary: summary},
			stop("6", "loop: error exit=6 steps=2", "iteration 7: context-write failed: disk full")},
		{"runner error, no meta", decideInput{code: 6, committed: strings.Replace(errLine, "iter=7", "iter=8", 1), steps: 2, summary: summary},
			stop("6", "loop: error exit=6 steps=2", "runner-step failed with exit 6 after 2 steps")},
		{"committed otherwise", decideInput{code: 6, committed: "step: run=run-r iter=7 node=a status=failed guard=fail", steps: 2, summary: summary},
			stop("6", "loop: error exit=6 steps=2", "runner-step failed with exit 6 after 2 steps")},
	}
	for _, sig := range []int{130, 143} {
		word := map[int]string{130: "SIGINT", 143: "SIGTERM"}[sig]
		for _, code := range []int{0, 5, 7, 8} {
			cases = append(cases, struct {
				name string
				in   decideInput
				want want
			}{"exit " + strconv.Itoa(code) + " " + word, decideInput{code: code, out: waitingOut, steps: 1, signaled: sig, wait: true, canceled: true},
				stop(strconv.Itoa(sig), "loop: interrupted reason="+word+" steps=1", "interrupted by "+word+" after 1 step")})
		}
		// A signal leaves an exit code that ends the loop anyway as it is.
		cases = append(cases, struct {
			name string
			in   decideInput
			want want
		}{"complete " + word, decideInput{code: 2, steps: 1, signaled: sig}, stop("0", "loop: complete steps=1", "the tree is complete after 1 step")})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := decide(c.in)
			got := want{f["action"], f["line"], f["end_reason"], f["end_status"], f["cancel"], f["exit"]}
			if got != c.want {
				t.Errorf("decide(%+v)\n got %+v\nwant %+v", c.in, got, c.want)
			}
			if len(f) != 6 {
				t.Errorf("facts %v: want action, line, end_reason, end_status, cancel, exit", f)
			}
		})
	}
}

// TestDecideCommand runs runner-record decide in a repository: the runner
// error's reason from the iteration's meta.json, the cancel file, the
// decision on --data-fd as shell assignments.
func TestDecideCommand(t *testing.T) {
	root := repo(t)
	dir := filepath.Join(root, layout.Iterations, "run-r", layout.IterName(3))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := iterdir.Write(dir, iterdir.MetaFile, iterdir.Meta{Iteration: 3, RunID: "run-r", Status: "runner_error",
		Summary: "tree-update failed: it's broken"}); err != nil {
		t.Fatal(err)
	}
	decideOut := func(args ...string) string {
		t.Helper()
		data, err := os.CreateTemp(t.TempDir(), "data")
		if err != nil {
			t.Fatal(err)
		}
		defer data.Close()
		args = append([]string{"decide", "--data-fd", strconv.Itoa(int(data.Fd()))}, args...)
		code, stdout, stderr := run(t, root, args...)
		if code != 0 || stdout != "" || stderr != "" {
			t.Fatalf("runner-record %v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
		b, err := os.ReadFile(data.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	committed := "--committed=step: run=run-r iter=3 node=a status=runner_error guard=skipped"
	want := "action='stop'\ncancel=''\nend_reason='iteration 3: tree-update failed: it'\\''s broken'\nend_status=''\n" +
		"line='loop: error exit=6 steps=4'\nexit=6\n"
	if got := decideOut("--exit", "6", "--steps", "4", committed); got != want {
		t.Errorf("runner error:\n got %q\nwant %q", got, want)
	}
	if got := decideOut("--exit", "0", "--steps", "4", committed); got != "action='continue'\ncancel=''\nend_reason=''\nend_status=''\nline=''\nexit=\n" {
		t.Errorf("go on: got %q", got)
	}
	if err := os.WriteFile(filepath.Join(root, layout.Cancel), []byte("by op\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want = "action='stop'\ncancel='1'\nend_reason='canceled by .runner/cancel after 1 step'\nend_status='canceled'\n" +
		"line='loop: interrupted reason=cancel-file steps=1'\nexit=130\n"
	if got := decideOut("--exit", "130", "--steps", "1"); got != want {
		t.Errorf("cancel file:\n got %q\nwant %q", got, want)
	}
	want = strings.Replace(strings.Replace(strings.Replace(strings.Replace(want, "cancel='1'", "cancel=''", 1),
		"'canceled by .runner/cancel", "'interrupted by SIGTERM", 1), "end_status='canceled'", "end_status=''", 1), "cancel-file", "SIGTERM", 1)
	want = strings.Replace(want, "exit=130", "exit=143", 1)
	if got := decideOut("--exit", "130", "--steps", "1", "--signaled", "143"); got != want {
		t.Errorf("signal over the cancel file:\n got %q\nwant %q", got, want)
	}
}
