package ratchet

import (
	"slices"
	"testing"
)

// TestEvents: go test -json and -v output, fed in pieces that split
// lines, give the tests that passed and what failed; a package whose
// TestMain exits 0 after a failing test still reports that test's fail.
func TestEvents(t *testing.T) {
	out := `{"Action":"run","Package":"ex/calc","Test":"TestAdd"}
{"Action":"output","Package":"ex/calc","Test":"TestAdd","Output":"--- FAIL: TestFake (0.00s)\n"}
{"Action":"pass","Package":"ex/calc","Test":"TestAdd","Elapsed":0}
{"Action":"fail","Package":"ex/calc","Test":"TestMul","Elapsed":0}
{"Action":"pass","Package":"ex/calc","Test":"TestEmpty","Elapsed":0}
{"Action":"pass","Package":"ex/calc","Elapsed":0.01}
=== RUN   TestText
--- PASS: TestText (0.00s)
    --- PASS: TestText/sub (0.00s)
--- FAIL: TestOther (0.01s)
ok  	ex/other	0.01s
FAIL	ex/third [build failed]`
	e := NewEvents()
	for i := 0; i < len(out); i += 7 {
		e.Write([]byte(out[i:min(i+7, len(out))]))
	}
	e.Close()
	if got, want := e.Passed(), []string{"TestText", "TestText/sub", "ex/calc.TestAdd", "ex/calc.TestEmpty"}; !slices.Equal(got, want) {
		t.Errorf("Passed = %q, want %q", got, want)
	}
	if got, want := e.Failed(), []string{"TestOther", "ex/calc.TestMul", "ex/third [build failed]"}; !slices.Equal(got, want) {
		t.Errorf("Failed = %q, want %q", got, want)
	}
}

// TestNames: the names file is one run's; another run's binds nothing.
func TestNames(t *testing.T) {
	data := FormatNames("r1", []string{"a.TestB", "a.TestA"})
	if names, ok := ParseNames("r1", data); !ok || !slices.Equal(names, []string{"a.TestA", "a.TestB"}) {
		t.Errorf("ParseNames = %q, %v", names, ok)
	}
	if _, ok := ParseNames("r2", data); ok {
		t.Error("another run's names bind")
	}
	if got := Missing([]string{"a", "b", "c"}, []string{"a", "c", "d"}); !slices.Equal(got, []string{"b"}) {
		t.Errorf("Missing = %q", got)
	}
}
