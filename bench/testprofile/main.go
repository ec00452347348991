// Command testprofile reads `go test -json` output (stdin, or the files
// named) and prints where a suite's time goes: the slowest packages with
// their share of the summed package time, then the slowest tests and
// testscripts (a script is TestScripts/<name>) with their share of their
// package's time. Parallel tests overlap, so shares of a package may sum
// past 100%. Used by `just test-profile`.
//
// Usage: testprofile [-n N] [FILE...]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one test2json record, as far as it is read here.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

// timing is one package's or test's time and how it ended.
type timing struct {
	name    string
	pkg     string
	seconds float64
	action  string
}

func main() {
	n := flag.Int("n", 20, "how many of the slowest tests and scripts to print")
	flag.Parse()
	var in []io.Reader
	for _, f := range flag.Args() {
		fh, err := os.Open(f)
		if err != nil {
			fmt.Fprintf(os.Stderr, "testprofile: %v\n", err)
			os.Exit(1)
		}
		defer fh.Close()
		in = append(in, fh)
	}
	if len(in) == 0 {
		in = append(in, os.Stdin)
	}
	pkgs, tests, err := read(io.MultiReader(in...))
	if err != nil {
		fmt.Fprintf(os.Stderr, "testprofile: %v\n", err)
		os.Exit(1)
	}
	if len(pkgs) == 0 {
		fmt.Fprintln(os.Stderr, "testprofile: no package timings in the input (go test -json output expected)")
		os.Exit(1)
	}
	report(os.Stdout, pkgs, tests, *n)
}

// read collects the package and test timings of a go test -json stream;
// lines that are not JSON events (a build failure's text) are skipped.
func read(r io.Reader) (pkgs, tests []timing, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Action != "pass" && ev.Action != "fail" && ev.Action != "skip" {
			continue
		}
		t := timing{name: ev.Test, pkg: ev.Package, seconds: ev.Elapsed, action: ev.Action}
		switch {
		case ev.Test == "":
			t.name = ev.Package
			pkgs = append(pkgs, t)
		case strings.Count(ev.Test, "/") == 0 || strings.HasPrefix(ev.Test, "TestScripts/"):
			tests = append(tests, t)
		}
	}
	return pkgs, tests, sc.Err()
}

// report prints the two tables, slowest first.
func report(w io.Writer, pkgs, tests []timing, n int) {
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].seconds > pkgs[j].seconds })
	sort.Slice(tests, func(i, j int) bool { return tests[i].seconds > tests[j].seconds })
	total := 0.0
	byPkg := map[string]float64{}
	for _, p := range pkgs {
		total += p.seconds
		byPkg[p.name] = p.seconds
	}
	fmt.Fprintf(w, "packages: %d, summed time %.1f s\n\n", len(pkgs), total)
	fmt.Fprintln(w, "| package | s | share |")
	fmt.Fprintln(w, "| --- | ---: | ---: |")
	for i, p := range pkgs {
		if i == n || p.seconds < 0.05 {
			break
		}
		fmt.Fprintf(w, "| %s%s | %.1f | %.0f%% |\n", short(p.name), mark(p.action), p.seconds, 100*p.seconds/total)
	}
	fmt.Fprintf(w, "\n| test or script | package | s | share of package |\n")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: |")
	for i, t := range tests {
		if i == n {
			break
		}
		share := 0.0
		if p := byPkg[t.pkg]; p > 0 {
			share = 100 * t.seconds / p
		}
		fmt.Fprintf(w, "| %s%s | %s | %.1f | %.0f%% |\n", t.name, mark(t.action), short(t.pkg), t.seconds, share)
	}
}

// short is a package path without the module's.
func short(pkg string) string {
	return strings.TrimPrefix(strings.TrimPrefix(pkg, "github.com/treeloop/treeloop"), "/")
}

// mark notes a failed or skipped entry.
func mark(action string) string {
	if action == "pass" {
		return ""
	}
	return " (" + action + ")"
}
