package testresults

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/treeloop/treeloop/lib/internal/lazyre"
)

// maxLine is the longest output line read for a test; a longer one is
// skipped (no test line is that long).
const maxLine = 1 << 20

// Stream collects the tests a guard's output reports as it streams: an
// io.Writer fed every byte of the output (not the capped log), line by
// line, in the line formats: `go test -json`, `go test -v` and libtest's.
// Close it before reading Results.
type Stream struct {
	partial []byte
	skip    bool    // the current line is longer than maxLine
	target  string  // libtest: the source of the test binary running
	res     Results // test2json's events: a test cannot forge one
	text    Results // the text formats' lines (go test -v, libtest), which a test's output can forge
	// said is, for each Go test, the first line of its output that says
	// something (not "=== RUN" or "--- FAIL"): its failure's message.
	said map[string]string
	// failedIn are the Go packages a failing test was reported in: their
	// own failure says nothing more.
	failedIn map[string]bool
}

// Write takes the next bytes of the output; it never fails.
func (s *Stream) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.keep(p)
			break
		}
		s.keep(p[:i])
		if !s.skip {
			s.line(s.partial)
		}
		s.partial, s.skip = s.partial[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (s *Stream) keep(p []byte) {
	if s.skip || len(s.partial)+len(p) > maxLine {
		s.partial, s.skip = s.partial[:0], true
		return
	}
	s.partial = append(s.partial, p...)
}

// Close takes a last line without a newline.
func (s *Stream) Close() error {
	if len(s.partial) > 0 && !s.skip {
		s.line(s.partial)
	}
	s.partial = nil
	return nil
}

// Results are the tests the output reported; Sources is ["output"] when
// there was at least one.
func (s *Stream) Results() Results {
	var r Results
	r.Merge(s.res)
	r.Merge(s.text)
	if r.Len() > 0 {
		r.addSource("output")
	}
	return r
}

// Structured are the tests the output reported as test2json events alone:
// go test -json wraps every line a test prints, so a test cannot forge one
// as it can a line of the text formats.
func (s *Stream) Structured() Results {
	var r Results
	r.Merge(s.res)
	if r.Len() > 0 {
		r.addSource("output")
	}
	return r
}

var (
	goVerbose  = lazyre.New(`^\s*--- (PASS|FAIL|SKIP): (\S+) \(`)
	goPkgFail  = lazyre.New(`^FAIL(\s|$)`)
	libtest    = lazyre.New(`^test (.+?) \.\.\. (ok|FAILED|ignored|ignored, .*)$`)
	libRunning = lazyre.New(`^\s*Running (?:unittests )?(\S+)`)
	libDoc     = lazyre.New(`^\s*Doc-tests (\S+)`)
)

// event is one test2json record, as far as it is read here.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

func (s *Stream) line(l []byte) {
	l = bytes.TrimRight(l, "\r")
	if len(l) > 0 && l[0] == '{' && bytes.Contains(l, []byte(`"Action"`)) {
		var ev event
		if json.Unmarshal(l, &ev) == nil {
			s.goEvent(ev)
			return
		}
	}
	line := string(l)
	if m := goVerbose().FindStringSubmatch(line); m != nil {
		s.text.Add(m[2], goStatus(m[1]), "")
		return
	}
	if goPkgFail().MatchString(line) {
		s.text.Add(strings.TrimSpace(strings.TrimPrefix(line, "FAIL")), Error, "package failed")
		return
	}
	if m := libRunning().FindStringSubmatch(line); m != nil {
		s.target = m[1]
		return
	}
	if m := libDoc().FindStringSubmatch(line); m != nil {
		s.target = "doctest:" + m[1]
		return
	}
	if m := libtest().FindStringSubmatch(line); m != nil {
		name := m[1]
		if s.target != "" {
			name = s.target + "::" + name
		}
		st := Skipped
		switch m[2] {
		case "ok":
			st = Passed
		case "FAILED":
			st = Failed
		}
		s.text.Add(name, st, "")
	}
}

// goEvent takes one test2json event: a test's pass, fail or skip, or a
// package's fail (a build failure, a TestMain that failed).
func (s *Stream) goEvent(ev event) {
	name := ev.Package
	if ev.Test != "" {
		name = ev.Package + "." + ev.Test
	}
	switch ev.Action {
	case "output":
		if ev.Test != "" {
			s.output(name, ev.Output)
		}
	case "pass":
		if ev.Test != "" {
			s.res.Add(name, Passed, "")
		}
	case "skip":
		if ev.Test != "" {
			s.res.Add(name, Skipped, "")
		}
	case "fail":
		if ev.Test != "" {
			s.res.Add(name, Failed, s.said[name])
			if s.failedIn == nil {
				s.failedIn = map[string]bool{}
			}
			s.failedIn[ev.Package] = true
		} else if !s.failedIn[ev.Package] {
			// A package that fails with no failing test: it did not
			// build, or its TestMain failed it.
			s.res.Add(name, Error, "package failed")
		}
	}
}

// output keeps the first line of a Go test's output that says something.
func (s *Stream) output(name, out string) {
	if _, ok := s.said[name]; ok {
		return
	}
	l := strings.TrimSpace(out)
	if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
		return
	}
	if s.said == nil {
		s.said = map[string]string{}
	}
	s.said[name] = l
}

func goStatus(word string) Status {
	switch word {
	case "PASS":
		return Passed
	case "FAIL":
		return Failed
	}
	return Skipped
}
