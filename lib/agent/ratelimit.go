package agent

import "time"

// Backoff after a usage or rate limit whose end the CLI did not report: 30
// s doubling with each consecutive limit, capped at 15 minutes.
const (
	RateLimitBackoff    = 30 * time.Second
	RateLimitBackoffCap = 15 * time.Minute
)

// backoff is the wait after the k-th consecutive limit (k from 0) with no
// reset time.
func backoff(k int) time.Duration {
	d := RateLimitBackoff
	for i := 0; i < k && d < RateLimitBackoffCap; i++ {
		d *= 2
	}
	return min(d, RateLimitBackoffCap)
}

// RateLimitWait is how long on_rate_limit = "wait" waits inside an
// iteration after the k-th consecutive rate limit (k from 0): until the
// reset time the CLI reported (plus a second, at least a second), else the
// backoff; capped at RateLimitBackoffCap either way (the iteration's
// budget is short).
func RateLimitWait(resetAt string, k int, now time.Time) time.Duration {
	if t, err := time.Parse(time.RFC3339, resetAt); err == nil {
		return min(max(t.Sub(now)+time.Second, time.Second), RateLimitBackoffCap)
	}
	return backoff(k)
}

// PauseUntil is when a run that a usage limit paused tries a fresh session
// again, the k-th consecutive pause (k from 0): the reset time the session
// reported plus a second (however far: a 5-hour window, a weekly limit;
// max_pause bounds it), at least a second from now, else now plus the
// backoff.
func PauseUntil(resetAt string, k int, now time.Time) time.Time {
	if t, err := time.Parse(time.RFC3339, resetAt); err == nil {
		if t = t.Add(time.Second); t.After(now.Add(time.Second)) {
			return t
		}
		return now.Add(time.Second)
	}
	return now.Add(backoff(k))
}
