package trace

import (
	"testing"
	"time"
)

// TestParseLaunch: EPOCHREALTIME's shape, to the ns; anything else is no
// launch time.
func TestParseLaunch(t *testing.T) {
	for v, want := range map[string]time.Time{
		"1795455600.123456":     time.Unix(1795455600, 123456000),
		"1795455600":            time.Unix(1795455600, 0),
		"1795455600.000000001":  time.Unix(1795455600, 1),
		"":                      {},
		"x.5":                   {},
		"1795455600.-5":         {},
		"1795455600.1234567890": {},
		"-3.5":                  {},
	} {
		if got := parseLaunch(v); !got.Equal(want) {
			t.Errorf("parseLaunch(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestPick: the launch time stands within the tick /proc rounds to (and
// the slack around it), never outside: an inherited or future launch
// time leaves /proc's figure.
func TestPick(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct{ upper, l, want time.Duration }{
		{50 * ms, 43 * ms, 43 * ms},  // within the tick
		{50 * ms, 52 * ms, 52 * ms},  // clock read in the tick before
		{50 * ms, 36 * ms, 36 * ms},  // tick and slack
		{50 * ms, 34 * ms, 50 * ms},  // too early: not this process's launch
		{50 * ms, 900 * ms, 50 * ms}, // inherited from a long-running parent
		{50 * ms, -2 * ms, 50 * ms},  // in the future
		{50 * ms, 56 * ms, 50 * ms},  // beyond the slack
	} {
		if got := pick(c.upper, c.l); got != c.want {
			t.Errorf("pick(upper %v, launch %v) = %v, want %v", c.upper, c.l, got, c.want)
		}
	}
}
