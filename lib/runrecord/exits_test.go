package runrecord

import "testing"

// TestEndOfExit: each porcelain's exit codes and what they do to the run
// record (the table runner-step and runner-loop document in their help).
func TestEndOfExit(t *testing.T) {
	type want struct {
		status string
		failed bool
	}
	cases := []struct {
		by   string
		code int
		want want
	}{
		{ByLoop, 0, want{Complete, false}},
		{ByLoop, 3, want{Stuck, false}},
		{ByLoop, 4, want{Limit, false}},
		{ByLoop, 7, want{Waiting, false}},
		{ByLoop, 8, want{Paused, false}},
		{ByLoop, 124, want{Timeout, false}},
		{ByLoop, 130, want{Interrupted, false}},
		{ByLoop, 143, want{Interrupted, false}},
		{ByLoop, 1, want{Error, false}},
		{ByLoop, 6, want{Error, false}},
		{ByLoop, 80, want{Error, false}},
		{ByStep, 0, want{"", false}},
		{ByStep, 5, want{"", false}},
		{ByStep, 8, want{"", false}},
		{ByStep, 2, want{Complete, false}},
		{ByStep, 3, want{Stuck, false}},
		{ByStep, 4, want{Limit, false}},
		{ByStep, 7, want{Waiting, false}},
		{ByStep, 124, want{Timeout, false}},
		{ByStep, 130, want{Interrupted, false}},
		{ByStep, 143, want{Interrupted, false}},
		{ByStep, 1, want{"", true}},
		{ByStep, 6, want{"", true}},
		{ByStep, 80, want{"", true}},
	}
	for _, c := range cases {
		status, failed := EndOfExit(c.by, c.code)
		if (want{status, failed}) != c.want {
			t.Errorf("%s exit %d: status %q failed %v, want %+v", c.by, c.code, status, failed, c.want)
		}
	}
}
