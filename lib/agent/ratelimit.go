package agent

import "time"

// Backoff after a usage or rate limit whose end the CLI did not report: 30
// s doubling with each consecutive limit, capped at 15 minutes. After an
// outage: 10 s doubling likewise (the CLI has retried for a while
// already; a provider back soon is tried again soon).
const (
	RateLimitBackoff    = 30 * time.Second
	RateLimitBackoffCap = 15 * time.Minute
	OutageBackoff       = 10 * time.Second
)

// backoff is the wait after the k-th consecutive limit (k from 0) with no
// reset time.
func backoff(k int) time.Duration { return backoffFrom(RateLimitBackoff, k) }

// backoffFrom is first doubled k times, capped at RateLimitBackoffCap.
func backoffFrom(first time.Duration, k int) time.Duration {
	d := first
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

// PauseUntil is when a run that a session ending in class paused tries a
// fresh session again, the k-th consecutive pause (k from 0). After a rate
// limit: the reset time the session reported plus a second (however far:
// a 5-hour window, a weekly limit; runner-record pause caps it at
// max_pause), at least a second from now, else now plus the backoff.
// After an outage: now plus the outage backoff.
func PauseUntil(class, resetAt string, k int, now time.Time) time.Time {
	if class == ClassOutage {
		return now.Add(backoffFrom(OutageBackoff, k))
	}
	if t, err := time.Parse(time.RFC3339, resetAt); err == nil {
		if t = t.Add(time.Second); t.After(now.Add(time.Second)) {
			return t
		}
		return now.Add(time.Second)
	}
	return now.Add(backoff(k))
}
