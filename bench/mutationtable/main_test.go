package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const report = `{"go_module":"m","files":[
 {"file_name":"b.go","mutations":[
  {"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":3,"column":9},
  {"type":"ARITHMETIC_BASE","status":"KILLED","line":2,"column":1},
  {"type":"ARITHMETIC_BASE","status":"TIMED OUT","line":2,"column":5}]},
 {"file_name":"a.go","mutations":[
  {"type":"CONDITIONALS_NEGATION","status":"KILLED","line":1,"column":1},
  {"type":"CONDITIONALS_NEGATION","status":"KILLED","line":1,"column":4},
  {"type":"CONDITIONALS_NEGATION","status":"KILLED","line":9,"column":4},
  {"type":"INVERT_NEGATIVES","status":"NOT COVERED","line":5,"column":2},
  {"type":"INVERT_NEGATIVES","status":"NOT VIABLE","line":6,"column":2},
  {"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":1,"column":2}]}]}`

// TestTable: counts, efficacy (killed / covered) and coverage (covered /
// all but timed-out and not-viable), the survivors with their source
// lines, and the exit code against the minimums.
func TestTable(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "pkg")
	if err := os.Mkdir(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "a.go"), []byte("  if x > 0 {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(dir, "r.json")
	if err := os.WriteFile(rep, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"-min-efficacy", "60", "-min-coverage", "80", pkg + "=" + rep}, &out, &errb)
	date := time.Now().UTC().Format("2006-01-02")
	want := Header + "| " + pkg + " | 9 | 4 | 2 | 1 | 1 | 66.7% | 85.7% | " + date + " |\n" +
		"\nlived in " + pkg + ":\n  a.go:1:2 CONDITIONALS_BOUNDARY | if x > 0 {\n  b.go:3:9 CONDITIONALS_BOUNDARY | \n"
	if code != 0 || out.String() != want || errb.Len() != 0 {
		t.Fatalf("exit %d\n%s\nwant:\n%s\nstderr %q", code, out.String(), want, errb.String())
	}
	for _, args := range [][]string{{"-min-efficacy", "70"}, {"-min-coverage", "90"}} {
		out.Reset()
		errb.Reset()
		if code := run(append(args, pkg+"="+rep), &out, &errb); code != 1 || !strings.Contains(errb.String(), "efficacy 66.7%, coverage 85.7%") {
			t.Errorf("%v: exit %d, %q", args, code, errb.String())
		}
	}
	for _, args := range [][]string{{}, {"x.json"}, {"p=" + filepath.Join(dir, "missing.json")}, {"p=" + filepath.Join(pkg, "a.go")}} {
		if code := run(args, &out, &errb); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
}
