package iterdir

import (
	"reflect"
	"testing"
)

// TestCite: the evidence in brief, the tests that passed again counted
// from those missing; the witnesses, none when no witness ran; nil for
// no evidence.
func TestCite(t *testing.T) {
	if (*Evidence)(nil).Cite() != nil {
		t.Error("Cite of nil evidence")
	}
	e := &Evidence{Level: "witness", Held: true, Passed: 9, Failed: 1, Errors: 2, Skipped: 3, PassToPass: 7,
		Missing: []string{"a", "b"}, Witness: &Witness{Tests: []string{"t1", "t2"}}}
	want := &Cited{Level: "witness", Held: true, Passed: 9, Failed: 1, Errors: 2, Skipped: 3, PassToPass: 7, PassedAgain: 5,
		Witnesses: []string{"t1", "t2"}}
	if got := e.Cite(); !reflect.DeepEqual(got, want) {
		t.Errorf("Cite = %+v, want %+v", got, want)
	}
	e = &Evidence{Level: "suite", PassToPass: 4}
	want = &Cited{Level: "suite", PassToPass: 4, PassedAgain: 4, Witnesses: []string{}}
	if got := e.Cite(); !reflect.DeepEqual(got, want) {
		t.Errorf("Cite without a witness = %+v, want %+v", got, want)
	}
}
