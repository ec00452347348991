package runstate

import (
	"strings"
	"testing"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
)

// TestCheckAgreesWithSchema holds check, the run_state schema written out
// for the commands that do not link the full validator, to the full
// validator: every document is accepted by both or refused by both.
func TestCheckAgreesWithSchema(t *testing.T) {
	const ok = `"run_id":"run-1","next_iter":3,"last_status":"done","last_summary":"s","last_guard":"pass"`
	docs := []string{
		`{` + ok + `}`,
		`{` + ok + `,"last_iter":2,"last_node":"a"}`,
		`{` + ok + `,"last_iter":null,"last_node":null}`,
		`{"run_id":null,"next_iter":1,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":1.0,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":1e2,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":1.5,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":0,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":"1","last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":"-bad","next_iter":1,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":"` + strings.Repeat("a", 128) + `","next_iter":1,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":"` + strings.Repeat("a", 129) + `","next_iter":1,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":"é","next_iter":1,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":1,"next_iter":1,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"next_iter":1,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":null,"last_status":null,"last_summary":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":1,"last_summary":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":1,"last_status":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":1,"last_status":null,"last_summary":null}`,
		`{` + ok + `,"extra":1}`,
		`{"run_id":null,"next_iter":1,"last_status":"runner_error","last_summary":null,"last_guard":"skipped"}`,
		`{"run_id":null,"next_iter":1,"last_status":"passed","last_summary":null,"last_guard":null}`,
		`{"run_id":null,"next_iter":1,"last_status":null,"last_summary":null,"last_guard":"green"}`,
		`{"run_id":null,"next_iter":1,"last_status":null,"last_summary":null,"last_guard":true}`,
		`{"run_id":null,"next_iter":1,"last_status":null,"last_summary":2,"last_guard":null}`,
		`{` + ok + `,"last_iter":0}`,
		`{` + ok + `,"last_iter":"2"}`,
		`{` + ok + `,"last_iter":2.5}`,
		`{` + ok + `,"last_node":false}`,
		`[]`, `"x"`, `null`,
	}
	for _, d := range docs {
		v, err := jsonstrict.Decode([]byte(d))
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		why := check(v)
		vs := full.Validate(schema.RunState, v)
		if (why == "") != (len(vs) == 0) {
			t.Errorf("%s: check says %q, the schema %v", d, why, vs)
		}
	}
}

// TestParseWithoutFullValidator: a program without the full validator
// still refuses an invalid file, with check's one-line reason.
func TestParseWithoutFullValidator(t *testing.T) {
	defer schema.SetValidator(schema.SetValidator(nil))
	if _, err := Parse([]byte(`{"run_id":null,"next_iter":0,"last_status":null,"last_summary":null,"last_guard":null}`)); err == nil || err.Error() != "/next_iter: not an integer >= 1" {
		t.Errorf("Parse = %v", err)
	}
	s, err := Parse([]byte(`{"run_id":"r","next_iter":2,"last_status":null,"last_summary":null,"last_guard":null}`))
	if err != nil || s.NextIter != 2 || Val(s.RunID) != "r" {
		t.Errorf("Parse = %+v, %v", s, err)
	}
}
