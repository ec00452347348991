package subject

import (
	"testing"

	"github.com/treeloop/treeloop/lib/vocab"
)

func TestIterationRoundTrip(t *testing.T) {
	if len(statusWords) < 8 || len(guardWords) < 6 {
		t.Fatalf("vocab words not found: statuses %v, guards %v", statusWords, guardWords)
	}
	for _, st := range statusWords {
		for _, g := range guardWords {
			it := Iteration{Run: "run-1", Iter: 12, Node: "root.2_a-b", Status: vocab.Status(st), Guard: vocab.Guard(g)}
			got, ok := ParseIteration(it.String())
			if !ok || got != it {
				t.Errorf("ParseIteration(%q) = %+v %v, want %+v", it.String(), got, ok, it)
			}
		}
	}
}

func TestIterationString(t *testing.T) {
	it := Iteration{Run: "r1", Iter: 4, Node: "a.b", Status: vocab.StatusDone, Guard: vocab.GuardPass}
	if got, want := it.String(), "chore(loop): run r1 iter 4 node a.b status=done guard=pass"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if !it.Passed() {
		t.Fatal("done+pass not Passed")
	}
	for _, o := range []Iteration{{Status: vocab.StatusDone, Guard: vocab.GuardFail}, {Status: vocab.StatusRetry, Guard: vocab.GuardPass}} {
		if o.Passed() {
			t.Errorf("%+v Passed", o)
		}
	}
}

func TestParseIterationRefuses(t *testing.T) {
	for _, s := range []string{
		"",
		"chore(loop): run r1 iter 3 node a status=done guard=pass extra",
		"chore(loop): run r1 iter 3 node a status=done  guard=pass",
		" chore(loop): run r1 iter 3 node a status=done guard=pass",
		"chore(loop): run r1 iter 3 node a status=done guard=pass ",
		"chore(loop): run r1 iter 3 node a status=finished guard=pass",
		"chore(loop): run r1 iter 3 node a status=done guard=green",
		"chore(loop): run r1 iter 3 node a status= guard=pass",
		"chore(loop): run r1 iter 3 node a guard=pass status=done",
		"chore(loop): run r1 iter 3 node a status=done",
		"chore(loop): run r1 iter 0 node a status=done guard=pass",
		"chore(loop): run r1 iter -1 node a status=done guard=pass",
		"chore(loop): run r1 iter 03 node a status=done guard=pass",
		"chore(loop): run r1 iter +3 node a status=done guard=pass",
		"chore(loop): run r1 iter x node a status=done guard=pass",
		"chore(loop): run r1 iter 3 node .a status=done guard=pass",
		"chore(loop): run r/1 iter 3 node a status=done guard=pass",
		"chore(loop): run r1 iteration 3 node a status=done guard=pass",
		"chore(loop): run r1 iter 3 leaf a status=done guard=pass",
		"chore(loop):  run r1 iter 3 node a status=done guard=pass",
		"chore: run r1 iter 3 node a status=done guard=pass",
		"chore(loop): start run r1",
		"chore(loop): operator retry node a",
	} {
		if it, ok := ParseIteration(s); ok {
			t.Errorf("ParseIteration(%q) = %+v, want refused", s, it)
		}
	}
}

func TestParseRunIteration(t *testing.T) {
	s := "chore(loop): run r1 iter 3 node a.1 status=retry guard=skipped"
	if it, ok := ParseRunIteration(s, "r1"); !ok || it.Iter != 3 || it.Node != "a.1" || it.Status != vocab.StatusRetry || it.Guard != vocab.GuardSkipped {
		t.Errorf("ParseRunIteration(%q, r1) = %+v %v", s, it, ok)
	}
	for _, run := range []string{"r", "r10", "r1 ", ""} {
		if _, ok := ParseRunIteration(s, run); ok {
			t.Errorf("ParseRunIteration(%q, %q) accepted another run's subject", s, run)
		}
	}
}

func TestStart(t *testing.T) {
	if got, want := Start("run-7"), "chore(loop): start run run-7"; got != want {
		t.Fatalf("Start = %q, want %q", got, want)
	}
	if r, ok := ParseStart(Start("run-7")); !ok || r != "run-7" {
		t.Errorf("ParseStart round trip = %q %v", r, ok)
	}
	for _, s := range []string{"chore(loop): start run ", "chore(loop): start run r1 again", "chore(loop): start run  r1", "chore(loop): start r1", "chore(loop): run r1 iter 1 node a status=done guard=pass"} {
		if r, ok := ParseStart(s); ok {
			t.Errorf("ParseStart(%q) = %q, want refused", s, r)
		}
	}
}

func TestOfRun(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{Start("r1"), true},
		{"chore(loop): run r1 iter 2 node a status=done guard=fail", true},
		{Start("r10"), false},
		{"chore(loop): run r10 iter 2 node a status=done guard=fail", false},
		{"chore(loop): run r1 iter 2 node a status=done guard=fail trailing", false},
		{Operator(ActionRetry, "a"), false},
		{"initial", false},
	} {
		if got := OfRun(tt.s, "r1"); got != tt.want {
			t.Errorf("OfRun(%q, r1) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

func TestOperator(t *testing.T) {
	if got, want := Operator(ActionAnswer, "root.1"), "chore(loop): operator answer node root.1"; got != want {
		t.Fatalf("Operator = %q, want %q", got, want)
	}
	for _, a := range Actions {
		got, node, ok := ParseOperator(Operator(a, "n-1"))
		if !ok || got != a || node != "n-1" {
			t.Errorf("ParseOperator round trip for %s = %q %q %v", a, got, node, ok)
		}
	}
	for _, s := range []string{"chore(loop): operator delete node a", "chore(loop): operator retry node a b", "chore(loop): operator retry node", "chore(loop): operator retry a", "chore(loop): operator retry node .a"} {
		if a, n, ok := ParseOperator(s); ok {
			t.Errorf("ParseOperator(%q) = %q %q, want refused", s, a, n)
		}
	}
}

// TestPassedOfRun is the reading provenance and export make of a pass: an
// iteration of the run, on a valid node, done on a green guard.
func TestPassedOfRun(t *testing.T) {
	for _, c := range []struct {
		subject string
		node    string
		iter    int
		ok      bool
	}{
		{"chore(loop): run r1 iter 7 node a.2 status=done guard=pass", "a.2", 7, true},
		{"chore(loop): run r1 iter 7 node a.2 status=done guard=fail", "", 0, false},
		{"chore(loop): run r1 iter 7 node a.2 status=retry guard=skipped", "", 0, false},
		{"chore(loop): run r1 iter 7 node a.2 status=decomposed guard=pass", "", 0, false},
		{"chore(loop): run r2 iter 7 node a.2 status=done guard=pass", "", 0, false},
		{"chore(loop): run r1 iter 07 node a.2 status=done guard=pass", "", 0, false},
		{"chore(loop): run r1 iter 0 node a.2 status=done guard=pass", "", 0, false},
		{"chore(loop): run r1 iter 7 node a b status=done guard=pass", "", 0, false},
		{"chore(loop): operator retry node a.2", "", 0, false},
		{"mark a.2 done", "", 0, false},
	} {
		it, ok := ParseRunIteration(c.subject, "r1")
		ok = ok && it.Passed()
		if ok != c.ok || ok && (it.Node != c.node || it.Iter != c.iter) {
			t.Errorf("pass of %q = %+v %v; want %q, %d, %v", c.subject, it, ok, c.node, c.iter, c.ok)
		}
	}
}

// TestPassedOnlyDoneOnGreenGuard holds Passed to the one way a leaf
// passes: the agent said done and the guard passed. Every other pair of
// an iteration status and a guard outcome (a skipped, timed-out,
// interrupted or errored guard under done among them) is not a pass, so
// provenance and export never take such a commit as backing a node.
func TestPassedOnlyDoneOnGreenGuard(t *testing.T) {
	for _, st := range statusWords {
		for _, g := range guardWords {
			it := Iteration{Run: "r1", Iter: 1, Node: "a", Status: vocab.Status(st), Guard: vocab.Guard(g)}
			want := st == string(vocab.StatusDone) && g == string(vocab.GuardPass)
			if got := it.Passed(); got != want {
				t.Errorf("status=%s guard=%s: Passed() = %v, want %v", st, g, got, want)
			}
		}
	}
}
