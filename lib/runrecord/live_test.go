package runrecord

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/treeloop/treeloop/lib/jsonstrict"
)

// TestGoneOn: a runner is gone only when its host is this one, it has a
// pid, and signal 0 says no such process. EPERM (a process of another
// user: the suite runs as root, where it never happens) is alive, and so
// is any other error.
func TestGoneOn(t *testing.T) {
	probe := func(err error) func(int) error {
		return func(pid int) error {
			if pid <= 0 {
				t.Errorf("probed pid %d", pid)
			}
			return err
		}
	}
	here := Runner{PID: 4242, Host: "h"}
	for _, c := range []struct {
		name string
		rn   Runner
		host string
		err  error
		want bool
	}{
		{"no such process", here, "h", syscall.ESRCH, true},
		{"wrapped", here, "h", fmt.Errorf("kill: %w", syscall.ESRCH), true},
		{"alive", here, "h", nil, false},
		{"another user's", here, "h", syscall.EPERM, false},
		{"another error", here, "h", syscall.EINVAL, false},
		{"another host", here, "other", syscall.ESRCH, false},
		{"no runner attached", Runner{PID: 0, Host: "h"}, "h", syscall.ESRCH, false},
		{"negative pid", Runner{PID: -1, Host: "h"}, "h", syscall.ESRCH, false},
		{"first pid", Runner{PID: 1, Host: "h"}, "h", syscall.ESRCH, true},
	} {
		if got := goneOn(c.rn, c.host, probe(c.err)); got != c.want {
			t.Errorf("%s: goneOn = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSignal0: the real probe on real processes.
func TestSignal0(t *testing.T) {
	if err := signal0(os.Getpid()); err != nil {
		t.Errorf("signal 0 to this process: %v", err)
	}
	if err := signal0(1 << 22); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("signal 0 to no process: %v", err)
	}
	host, _ := os.Hostname()
	if Gone(Runner{PID: os.Getpid(), Host: host}) || !Gone(Runner{PID: 1 << 22, Host: host}) {
		t.Error("Gone disagrees with the processes")
	}
}

// TestAddLogKeepsTheLast: at most MaxLog entries, the oldest dropped,
// times in UTC.
func TestAddLogKeepsTheLast(t *testing.T) {
	var r Record
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("X", 3600))
	for i := range MaxLog {
		r.AddLog(start.Add(time.Duration(i)*time.Second), "k", fmt.Sprint(i))
	}
	if len(r.Log) != MaxLog || r.Log[0].Message != "0" || r.Log[0].At.Location() != time.UTC || r.Log[0].At.Hour() != 23 {
		t.Fatalf("%d entries, first %+v", len(r.Log), r.Log[0])
	}
	r.AddLog(start, "k", "new")
	if len(r.Log) != MaxLog || r.Log[0].Message != "1" || r.Log[MaxLog-1].Message != "new" {
		t.Fatalf("%d entries, first %q, last %q", len(r.Log), r.Log[0].Message, r.Log[MaxLog-1].Message)
	}
}

// TestParseWordsSchemaProblems: with the full validator linked, a record
// check refuses is worded by the schema at its pointer ("/" for the
// document itself).
func TestParseWordsSchemaProblems(t *testing.T) {
	data := string(Encode(withVersion(sample())))
	for doc, prefix := range map[string]string{
		"[]": "/: ",
		strings.Replace(data, `"running"`, `"done"`, 1):                 "/status: ",
		strings.Replace(data, `"iterations": 0`, `"iterations": -1`, 1): "/iterations: ",
	} {
		_, err := Parse([]byte(doc))
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || strings.Contains(err.Error(), "not a run status") {
			t.Errorf("Parse(%.20q): %v, want the schema's words at %q", doc, err, prefix)
		}
	}
	if _, err := Parse([]byte("{")); err == nil {
		t.Error("not JSON: parsed")
	}
}

// TestListAndCurrentOf: records sorted by start then id, each through
// Effective; CurrentOf is the newest running record of the run.
func TestListAndCurrentOf(t *testing.T) {
	dir := t.TempDir()
	host, _ := os.Hostname()
	at := sample().StartedAt
	mk := func(id, runID, status string, start time.Time, pid int) {
		r := withVersion(sample())
		r.ID, r.RunID, r.Status, r.StartedAt, r.Runner = id, runID, status, start, Runner{PID: pid, Host: host}
		if status != Running {
			r.FinishedAt = &start
		}
		if err := Save(filepath.Join(dir, id+".json"), r); err != nil {
			t.Fatal(err)
		}
	}
	mk("r.3", "r", Running, at.Add(time.Hour), 0)
	mk("r.2", "r", Running, at, 0)
	mk("r", "r", Complete, at, 0)
	mk("q", "q", Running, at.Add(2*time.Hour), 1<<22) // its runner is gone
	mk("s", "s", Stuck, at, 0)
	mk("o", "o", Running, at.Add(-time.Hour), 0) // the oldest: first in the list
	if err := os.WriteFile(filepath.Join(dir, ".hidden.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := List(dir)
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID+":"+r.Status)
	}
	if got := strings.Join(ids, " "); got != "o:running r:complete r.2:running s:stuck r.3:running q:interrupted" {
		t.Errorf("List: %s", got)
	}
	for runID, want := range map[string]string{"r": "r.3", "o": "o", "s": "", "q": "", "none": ""} {
		id, ok := CurrentOf(dir, runID)
		if id != want || ok != (want != "") {
			t.Errorf("CurrentOf(%s) = %q %v, want %q", runID, id, ok, want)
		}
	}
	if err := os.Remove(filepath.Join(dir, "r.3.json")); err != nil {
		t.Fatal(err)
	}
	if id, ok := CurrentOf(dir, "r"); id != "r.2" || !ok {
		t.Errorf("CurrentOf(r) after r.3: %q %v", id, ok)
	}
	if recs, bad, err := List(filepath.Join(dir, "missing")); recs != nil || bad != nil || err != nil {
		t.Errorf("List of a missing directory: %v %v %v", recs, bad, err)
	}
	if _, _, err := List(filepath.Join(dir, "notes.txt")); err == nil {
		t.Error("List of a file: no error")
	}
	if id, ok := CurrentOf(filepath.Join(dir, "notes.txt"), "r"); id != "" || ok {
		t.Errorf("CurrentOf over an unreadable directory: %q %v", id, ok)
	}
}

// TestCheckCharacters: the generated check's wording of a bad kind deep in
// a long log, of a document that is not an object and of a log that is not
// an array (the patterns' own edges are lib/schema's matcher tests).
func TestCheckCharacters(t *testing.T) {
	r := withVersion(sample())
	for i := 0; i < 13; i++ {
		r.AddLog(r.StartedAt, "k", "m")
	}
	r.Log[12].Kind = "K"
	if why := checkBytes(t, Encode(r)); why != "/log/12/kind: not a kind (^[a-z][a-z0-9_]*$)" {
		t.Errorf("check: %q", why)
	}
	if why := check("x"); why != "/: not a JSON object" {
		t.Errorf("check of a string: %q", why)
	}
	v, err := jsonstrict.Decode(Encode(r))
	if err != nil {
		t.Fatal(err)
	}
	v.(map[string]any)["log"] = map[string]any{}
	if why := check(v); why != "/log: not an array" {
		t.Errorf("check of a log object: %q", why)
	}
}

func checkBytes(t *testing.T, data []byte) string {
	t.Helper()
	v, err := jsonstrict.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return check(v)
}
