package testresults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/joshdk/go-junit"
)

// maxFile is the largest results file read; a larger one is unreadable.
const maxFile = 256 << 20

// ReadDir reads every regular file under dir (the results directory a
// guard wrote) for tests by name, the format told by the file's content:
// JUnit XML, jest's JSON, `go test -json` lines, or the line formats of
// Stream (libtest's, `go test -v`). A file that is none of them, or not
// well formed, is listed in Unreadable with why; a file that reports no
// test is neither a source nor unreadable (an empty report). Errors: dir
// cannot be walked.
func ReadDir(dir string) (Results, error) {
	var r Results
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			r.Unreadable = append(r.Unreadable, fmt.Sprintf("%s: %v", rel(dir, p), err))
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		name := rel(dir, p)
		got, err := readFile(p)
		if err != nil {
			r.Unreadable = append(r.Unreadable, fmt.Sprintf("%s: %v", name, err))
			return nil
		}
		if got.Len() > 0 {
			got.Sources = nil
			got.addSource(name)
			r.Merge(got)
		}
		return nil
	})
	return r, err
}

func rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil {
		return filepath.ToSlash(r)
	}
	return p
}

// readFile reads one results file by its content.
func readFile(p string) (Results, error) {
	st, err := os.Stat(p)
	if err != nil {
		return Results{}, err
	}
	if st.Size() > maxFile {
		return Results{}, fmt.Errorf("larger than %d MiB", maxFile>>20)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return Results{}, err
	}
	return Parse(data)
}

// Parse reads one results file's bytes, its format told by its content.
// Errors: not a format known here, or a known one not well formed.
func Parse(data []byte) (Results, error) {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return Results{}, nil
	case trimmed[0] == '<':
		return parseJUnit(trimmed)
	case trimmed[0] == '{' && !bytes.Contains(firstLineOf(trimmed), []byte(`"Action"`)):
		return parseJest(trimmed)
	}
	var s Stream
	s.Write(data)
	s.Close()
	r := s.Results()
	if r.Len() == 0 {
		return Results{}, errors.New("no test by name in a format known here (JUnit XML, jest JSON, go test -json, libtest lines)")
	}
	return r, nil
}

func firstLineOf(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// parseJUnit reads JUnit XML (one <testsuites> or <testsuite> document).
// A test is "<classname>::<name>", or its name when it has no classname.
func parseJUnit(data []byte) (Results, error) {
	suites, err := junit.Ingest(data)
	if err != nil {
		return Results{}, fmt.Errorf("JUnit XML: %v", err)
	}
	var r Results
	var walk func([]junit.Suite)
	walk = func(ss []junit.Suite) {
		for _, s := range ss {
			for _, t := range s.Tests {
				r.Add(junitName(t), junitStatus(t.Status), junitMessage(t))
			}
			walk(s.Suites)
		}
	}
	walk(suites)
	if r.Len() == 0 && !bytes.Contains(data, []byte("testsuite")) {
		return Results{}, errors.New("XML with no <testsuite>: not JUnit XML")
	}
	return r, nil
}

func junitName(t junit.Test) string {
	if c := strings.TrimSpace(t.Classname); c != "" {
		return c + "::" + t.Name
	}
	return t.Name
}

func junitStatus(s junit.Status) Status {
	switch s {
	case junit.StatusPassed:
		return Passed
	case junit.StatusFailed:
		return Failed
	case junit.StatusError:
		return Error
	}
	return Skipped
}

func junitMessage(t junit.Test) string {
	if t.Message != "" {
		return t.Message
	}
	if t.Error != nil {
		return t.Error.Error()
	}
	return ""
}

// jestReport is jest's --json output, as far as it is read here.
type jestReport struct {
	TestResults *[]struct {
		Name             string `json:"name"`
		Status           string `json:"status"`
		Message          string `json:"message"`
		AssertionResults []struct {
			FullName        string   `json:"fullName"`
			Status          string   `json:"status"`
			FailureMessages []string `json:"failureMessages"`
		} `json:"assertionResults"`
	} `json:"testResults"`
}

// parseJest reads jest's JSON report: a test is "<file>::<full name>"; a
// test file that failed to run is an error named by the file.
func parseJest(data []byte) (Results, error) {
	var rep jestReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return Results{}, fmt.Errorf("JSON: %v", err)
	}
	if rep.TestResults == nil {
		return Results{}, errors.New("JSON without testResults: not a jest report")
	}
	var r Results
	for _, f := range *rep.TestResults {
		if len(f.AssertionResults) == 0 && f.Status == "failed" {
			r.Add(f.Name, Error, f.Message)
		}
		for _, a := range f.AssertionResults {
			st := Skipped
			switch a.Status {
			case "passed":
				st = Passed
			case "failed":
				st = Failed
			}
			r.Add(f.Name+"::"+a.FullName, st, strings.Join(a.FailureMessages, "\n"))
		}
	}
	return r, nil
}
