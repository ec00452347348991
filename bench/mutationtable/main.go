// Command mutationtable turns gremlins reports (gremlins unleash --output)
// into the rows of bench/mutation.md's table, and lists the mutants that
// lived with their source lines. bench/mutate.sh runs it.
//
// Usage: mutationtable [-min-efficacy P] [-min-coverage P] PKG=REPORT.json...
//
// Efficacy is killed / (killed + lived), coverage (killed + lived) / (killed
// + lived + not covered), as gremlins counts them: timed-out and not-viable
// mutants are in neither. It exits 1 when a package is below either
// minimum (0 disables it).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Mutant is one mutation of a report.
type Mutant struct {
	File, Type, Status string
	Line, Column       int
}

// Row is one package's counts.
type Row struct {
	Pkg                                                     string
	Mutants, Killed, Lived, NotCovered, TimedOut, NotViable int
	Survivors                                               []Mutant
}

// Efficacy is killed / covered mutants, in percent; 0 when none is covered.
func (r Row) Efficacy() float64 { return percent(r.Killed, r.Killed+r.Lived) }

// Coverage is covered / all counted mutants, in percent.
func (r Row) Coverage() float64 { return percent(r.Killed+r.Lived, r.Killed+r.Lived+r.NotCovered) }

func percent(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// Parse reads one gremlins report (its "files": [{file_name, mutations:
// [{type, status, line, column}]}]).
func Parse(pkg string, data []byte) (Row, error) {
	if !gjson.ValidBytes(data) || !gjson.GetBytes(data, "files").IsArray() {
		return Row{}, fmt.Errorf("%s: not a gremlins report", pkg)
	}
	r := Row{Pkg: pkg}
	for _, f := range gjson.GetBytes(data, "files").Array() {
		file := f.Get("file_name").String()
		for _, m := range f.Get("mutations").Array() {
			mu := Mutant{File: file, Type: m.Get("type").String(), Status: m.Get("status").String(),
				Line: int(m.Get("line").Int()), Column: int(m.Get("column").Int())}
			r.Mutants++
			switch mu.Status {
			case "KILLED":
				r.Killed++
			case "LIVED":
				r.Lived++
				r.Survivors = append(r.Survivors, mu)
			case "NOT COVERED":
				r.NotCovered++
			case "TIMED OUT":
				r.TimedOut++
			case "NOT VIABLE":
				r.NotViable++
			}
		}
	}
	sort.Slice(r.Survivors, func(i, j int) bool {
		a, b := r.Survivors[i], r.Survivors[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return r, nil
}

// Header is the table's head, as in bench/mutation.md.
const Header = "| package | mutants | killed | lived | not covered | timed out | efficacy | coverage | date |\n" +
	"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n"

// Markdown is r's row of the table.
func (r Row) Markdown(date string) string {
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %.1f%% | %.1f%% | %s |\n",
		r.Pkg, r.Mutants, r.Killed, r.Lived, r.NotCovered, r.TimedOut, r.Efficacy(), r.Coverage(), date)
}

// sourceLine is line n of file, trimmed, "" when it cannot be read.
func sourceLine(file string, n int) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for i := 1; s.Scan(); i++ {
		if i == n {
			return strings.TrimSpace(s.Text())
		}
	}
	return ""
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutationtable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	minEff := fs.Float64("min-efficacy", 85, "fail below this efficacy (%), 0 to disable")
	minCov := fs.Float64("min-coverage", 70, "fail below this mutator coverage (%), 0 to disable")
	if err := fs.Parse(args); err != nil {
		return 80
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "mutationtable: name at least one PKG=REPORT.json")
		return 80
	}
	var rows []Row
	for _, a := range fs.Args() {
		pkg, path, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(stderr, "mutationtable: %q is not PKG=REPORT.json\n", a)
			return 80
		}
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "mutationtable: %v\n", err)
			return 1
		}
		r, err := Parse(pkg, data)
		if err != nil {
			fmt.Fprintf(stderr, "mutationtable: %v\n", err)
			return 1
		}
		rows = append(rows, r)
	}
	date := time.Now().UTC().Format("2006-01-02")
	fmt.Fprint(stdout, Header)
	for _, r := range rows {
		fmt.Fprint(stdout, r.Markdown(date))
	}
	code := 0
	for _, r := range rows {
		if len(r.Survivors) > 0 {
			fmt.Fprintf(stdout, "\nlived in %s:\n", r.Pkg)
		}
		for _, m := range r.Survivors {
			fmt.Fprintf(stdout, "  %s:%d:%d %s | %s\n", m.File, m.Line, m.Column, m.Type, sourceLine(filepath.Join(r.Pkg, m.File), m.Line))
		}
		if *minEff > 0 && r.Efficacy() < *minEff || *minCov > 0 && r.Coverage() < *minCov {
			fmt.Fprintf(stderr, "mutationtable: %s: efficacy %.1f%%, coverage %.1f%%: below %.0f%% / %.0f%%\n", r.Pkg, r.Efficacy(), r.Coverage(), *minEff, *minCov)
			code = 1
		}
	}
	return code
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
