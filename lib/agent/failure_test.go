package agent

import (
	"testing"

	"github.com/treeloop/treeloop/lib/jsonstrict"
	"github.com/treeloop/treeloop/lib/schema"
	"github.com/treeloop/treeloop/lib/schema/full"
	_ "github.com/treeloop/treeloop/lib/schema/full"
)

// A command agent's failure report: the class, message and reset time it
// gives, or no report at all.
func TestFailureReport(t *testing.T) {
	tests := []struct {
		doc  string
		want Failure
		ok   bool
	}{
		{`{"error": {"class": "rate_limit", "reset_at": "2026-01-02T08:00:00Z"}}`, Failure{Class: "rate_limit", ResetAt: "2026-01-02T08:00:00Z"}, true},
		{`{"error": {"class": "rate_limit", "message": "5-hour limit\nreached"}}`, Failure{Class: "rate_limit", Message: "5-hour limit reached"}, true},
		{`{"error": {"class": "auth"}}`, Failure{Class: "auth"}, true},
		{`{"error": {"class": "api_error", "message": "overloaded"}}`, Failure{Class: "api_error", Message: "overloaded"}, true},
		{`{"error": {"class": "timeout"}}`, Failure{}, false},                            // not a class an agent reports
		{`{"error": {"class": "rate_limit", "extra": 1}}`, Failure{}, false},             // extra key
		{`{"error": {"class": "rate_limit"}, "status": "done"}`, Failure{}, false},       // extra key
		{`{"error": {"message": "no class"}}`, Failure{}, false},                         // class required
		{`{"error": {"class": "rate_limit", "reset_at": "tomorrow"}}`, Failure{}, false}, // not a time
		{`{"error": "rate_limit"}`, Failure{}, false},
		{`{"status": "done", "summary": "error", "children": []}`, Failure{}, false},
		{`not json "error"`, Failure{}, false},
		{``, Failure{}, false},
	}
	for _, tt := range tests {
		got, ok := FailureReport([]byte(tt.doc))
		if ok != tt.ok || got != tt.want {
			t.Errorf("FailureReport(%s) = %+v, %v; want %+v, %v", tt.doc, got, ok, tt.want, tt.ok)
		}
		// Whatever FailureReport takes, the schema takes too; what the
		// schema refuses, FailureReport refuses.
		v, err := jsonstrict.Decode([]byte(tt.doc))
		valid := err == nil && len(full.Validate(schema.AgentFailure, v)) == 0
		if ok && !valid {
			t.Errorf("FailureReport takes %s, which the schema refuses", tt.doc)
		}
	}
}
