package runnerrecord

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/iterdir"
	"github.com/treeloop/treeloop/lib/layout"
	"github.com/treeloop/treeloop/lib/plumbing"
	"github.com/treeloop/treeloop/lib/runrecord"
	"github.com/treeloop/treeloop/lib/vocab"
)

// TestPlanPause: how long a pause lasts, what it is for, and whether it
// fits [agent] max_pause with the pausing done already counted.
func TestPlanPause(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	limited := func(reset string) lastPause {
		return lastPause{meta: iterdir.Meta{Iteration: 4, Agent: &iterdir.Agent{Class: "rate_limit", ResetAt: reset, Message: "the 5-hour limit"}}}
	}
	outage := lastPause{meta: iterdir.Meta{Iteration: 6, Agent: &iterdir.Agent{Class: "outage"}}, consecutive: 2}
	in5m := now.Add(5 * time.Minute).Format(time.RFC3339)
	in3d := now.Add(72 * time.Hour).Format(time.RFC3339)
	tests := []struct {
		name          string
		lp            lastPause
		paused, max   time.Duration
		wait          time.Duration
		cause         vocab.PauseCause
		capped, fits  bool
		reasonContain string
	}{
		{"a reset within max_pause", limited(in5m), 0, 12 * time.Hour, 5*time.Minute + time.Second, vocab.PauseUsageLimit, false, true, "the 5-hour limit"},
		// Pausing already done counts: the same reset no longer fits
		// once most of max_pause is spent.
		{"spent most of max_pause", limited(in5m), 11*time.Hour + 58*time.Minute, 12 * time.Hour, 5*time.Minute + time.Second, vocab.PauseUsageLimit, false, false, ""},
		{"exactly max_pause in all", limited(in5m), 12*time.Hour - 5*time.Minute - time.Second, 12 * time.Hour, 5*time.Minute + time.Second, vocab.PauseUsageLimit, false, true, ""},
		{"one second past it", limited(in5m), 12*time.Hour - 5*time.Minute, 12 * time.Hour, 5*time.Minute + time.Second, vocab.PauseUsageLimit, false, false, ""},
		// A reset beyond max_pause is capped at it.
		{"a far reset, capped", limited(in3d), 0, 12 * time.Hour, 12 * time.Hour, vocab.PauseUsageLimit, true, true, ""},
		{"a far reset after pausing", limited(in3d), time.Second, 12 * time.Hour, 12 * time.Hour, vocab.PauseUsageLimit, true, false, ""},
		{"no reset: the backoff", limited(""), 0, time.Hour, 30 * time.Second, vocab.PauseUsageLimit, false, true, ""},
		{"an outage's backoff", outage, 0, time.Hour, 40 * time.Second, vocab.PauseOutage, false, true, "an outage"},
		{"an outage past max_pause", outage, 59*time.Minute + 30*time.Second, time.Hour, 40 * time.Second, vocab.PauseOutage, false, false, ""},
		{"max_pause 0 never pauses", limited(in5m), 0, 0, 5*time.Minute + time.Second, vocab.PauseUsageLimit, false, false, ""},
	}
	for _, tt := range tests {
		p := planPause(tt.lp, now, tt.paused, tt.max)
		if p.wait != tt.wait || !p.until.Equal(now.Add(tt.wait)) || p.cause != tt.cause || (p.capped != "") != tt.capped || p.fits != tt.fits ||
			!strings.Contains(p.reason, tt.reasonContain) {
			t.Errorf("%s: planPause = %+v; want wait %v, cause %s, capped %v, fits %v", tt.name, p, tt.wait, tt.cause, tt.capped, tt.fits)
		}
	}
}

// pausedIteration writes the run's iteration n as paused on class (with
// reset) in the repository root.
func pausedIteration(t *testing.T, root string, n int, class, reset string) {
	t.Helper()
	dir := filepath.Join(root, layout.Iterations, "run-r", layout.IterName(n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := iterdir.Meta{Version: 1, RunID: "run-r", Iteration: n, NodeID: "root", Status: string(vocab.StatusPaused),
		Agent: &iterdir.Agent{Version: 1, Backend: "command", Class: class, Message: "the provider said " + class, ResetAt: reset}}
	if err := iterdir.Write(dir, iterdir.MetaFile, m); err != nil {
		t.Fatal(err)
	}
}

// TestPauseAccounting: runner-record pause counts the pausing already
// done, from --paused or from the record (whichever is more), against
// max_pause; what fits is recorded with its cause and resumed by wait.
func TestPauseAccounting(t *testing.T) {
	root := repo(t)
	cfg := filepath.Join(root, layout.Config)
	data, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), `max_pause = "12h"`, `max_pause = "10m"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, root, "pause"); code != 6 || !strings.Contains(errs, "did not pause") {
		t.Fatalf("no paused iteration: %d %q", code, errs)
	}
	reset := time.Now().Add(5 * time.Minute).UTC().Format(time.RFC3339)
	pausedIteration(t, root, 1, "rate_limit", reset)
	code, out, errs := run(t, root, "pause", "--paused", "0")
	if code != 0 || !strings.HasPrefix(out, "until=") || !strings.HasSuffix(out, " reason=usage-limit\n") || errs != "" {
		t.Fatalf("a pause that fits: %d %q %q", code, out, errs)
	}
	code, out, errs = run(t, root, "pause", "--paused", "400")
	if code != 4 || !strings.HasPrefix(out, "limit reason=max-pause until=") || !strings.Contains(errs, "400s paused already and [agent] max_pause = 10m0s") {
		t.Fatalf("--paused 400 and a 5-minute reset within 10m: %d %q %q", code, out, errs)
	}

	// With a record: its own pausing counts when runner-loop's is less.
	if code, _, errs := run(t, root, "begin", "--pid", "7"); code != 0 {
		t.Fatalf("begin: %s", errs)
	}
	if code, out, errs := run(t, root, "pause", "--record", "run-r"); code != 0 || !strings.Contains(out, "reason=usage-limit") {
		t.Fatalf("pause --record: %d %q %q", code, out, errs)
	}
	r := load(t, root, "run-r")
	if r.Status != runrecord.Paused || r.Pause == nil || r.Pause.Count != 1 || r.Pause.Cause != "usage-limit" || r.Pause.Until == nil ||
		!strings.Contains(r.Log[len(r.Log)-1].Message, "iteration 1 hit a usage limit (the provider said rate_limit)") {
		t.Fatalf("record after the pause: %+v %+v", r.Pause, r.Log)
	}
	r.Status, r.Pause.TotalSecs, r.Pause.Since, r.Pause.Until = runrecord.Running, 400, nil, nil
	if err := runrecord.Save(filepath.Join(root, layout.RunRecord("run-r")), r); err != nil {
		t.Fatal(err)
	}
	code, _, errs = run(t, root, "pause", "--record", "run-r", "--paused", "0")
	if code != 4 || !strings.Contains(errs, "400s paused already") {
		t.Fatalf("the record's 400 s paused already: %d %q", code, errs)
	}

	// An outage: its backoff, its cause, its words.
	pausedIteration(t, root, 2, "outage", "")
	code, out, errs = run(t, root, "pause", "--record", "run-r", "--paused", "0")
	// 20 s, the second backoff; secs counts from when it is printed, a
	// moment after until was decided.
	if code != 0 || !regexp.MustCompile(`secs=(19|20) reason=outage\n$`).MatchString(out) {
		t.Fatalf("the second pause in a row, an outage: %d %q %q", code, out, errs)
	}
	r = load(t, root, "run-r")
	if r.Pause.Count != 2 || r.Pause.Cause != "outage" || !strings.Contains(r.Log[len(r.Log)-1].Message, "iteration 2 met an outage") {
		t.Fatalf("record after the outage: %+v %+v", r.Pause, r.Log[len(r.Log)-1])
	}
}

// TestPauseDecision: runner-loop's decision after a pause is planned: a
// pause that fits goes on with the loop's paused line; one that does not
// stops the loop with exit 4 and the record's reason.
func TestPauseDecision(t *testing.T) {
	until := time.Date(2026, 1, 2, 3, 9, 6, 0, time.UTC)
	tests := []struct {
		name string
		plan pausePlan
		want string
	}{
		{"a usage limit that fits", pausePlan{cause: vocab.PauseUsageLimit, until: until, fits: true},
			"action='pause'\nend_reason=''\nline='loop: paused reason=usage-limit until=2026-01-02T03:09:06Z steps=3'\nuntil='2026-01-02T03:09:06Z'\nexit=\n"},
		{"an outage that fits", pausePlan{cause: vocab.PauseOutage, until: until, fits: true},
			"action='pause'\nend_reason=''\nline='loop: paused reason=outage until=2026-01-02T03:09:06Z steps=3'\nuntil='2026-01-02T03:09:06Z'\nexit=\n"},
		{"beyond max_pause", pausePlan{cause: vocab.PauseUsageLimit, until: until},
			"action='stop'\nend_reason='limit: max-pause: a usage limit or an outage outlasts [agent] max_pause'\nline='loop: limit reason=max-pause steps=3'\nuntil=''\nexit=4\n"},
	}
	for _, tt := range tests {
		if got := facts(t, pauseDecision(tt.plan, 3)); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

// facts is what f writes on a descriptor.
func facts(t *testing.T, f plumbing.Facts) string {
	t.Helper()
	data, err := os.CreateTemp(t.TempDir(), "data")
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	if err := f.Write(int(data.Fd())); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(data.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dataOut runs runner-record with --data-fd on a file and returns its
// exit code, stdout, stderr and what it wrote on the descriptor.
func dataOut(t *testing.T, root string, args ...string) (int, string, string, string) {
	t.Helper()
	data, err := os.CreateTemp(t.TempDir(), "data")
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	code, stdout, stderr := run(t, root, append(args, "--data-fd", strconv.Itoa(int(data.Fd())))...)
	b, err := os.ReadFile(data.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, stdout, stderr, string(b)
}

// TestPauseAndBeginDataFD: with --data-fd, begin writes the record id and
// pause its decision as shell assignments, and neither prints on stdout;
// a pause beyond max_pause is a decision (exit 0), its refusal on stderr.
func TestPauseAndBeginDataFD(t *testing.T) {
	root := repo(t)
	cfg := filepath.Join(root, layout.Config)
	data, _ := os.ReadFile(cfg)
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), `max_pause = "12h"`, `max_pause = "10m"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs, got := dataOut(t, root, "begin", "--pid", "7"); code != 0 || out != "" || errs != "" || got != "record='run-r'\nexit=0\n" {
		t.Fatalf("begin --data-fd: %d %q %q %q", code, out, errs, got)
	}
	pausedIteration(t, root, 1, "rate_limit", time.Now().Add(5*time.Minute).UTC().Format(time.RFC3339))
	code, out, errs, got := dataOut(t, root, "pause", "--record", "run-r", "--steps", "2")
	if code != 0 || out != "" || errs != "" ||
		!regexp.MustCompile(`^action='pause'\nend_reason=''\nline='loop: paused reason=usage-limit until=(20\S+Z) steps=2'\nuntil='20\S+Z'\nexit=\n$`).MatchString(got) {
		t.Fatalf("pause --data-fd: %d %q %q %q", code, out, errs, got)
	}
	if r := load(t, root, "run-r"); r.Status != runrecord.Paused {
		t.Errorf("the record after pause --data-fd: %s", r.Status)
	}
	code, out, errs, got = dataOut(t, root, "pause", "--paused", "400", "--steps", "2")
	if code != 0 || out != "" || !strings.HasPrefix(errs, "runner-record: the usage limit lifts at ") || !strings.Contains(errs, "400s paused already") ||
		!strings.HasPrefix(got, "action='stop'\n") || !strings.HasSuffix(got, "line='loop: limit reason=max-pause steps=2'\nuntil=''\nexit=4\n") {
		t.Fatalf("pause --data-fd beyond max_pause: %d %q %q %q", code, out, errs, got)
	}
}
