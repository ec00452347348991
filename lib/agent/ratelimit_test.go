package agent

import (
	"testing"
	"time"
)

func TestRateLimitWait(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		resetAt string
		k       int
		want    time.Duration
	}{
		{"", 0, 30 * time.Second},
		{"", 1, time.Minute},
		{"", 4, 8 * time.Minute},
		{"", 5, 15 * time.Minute},
		{"", 40, 15 * time.Minute},
		{"2026-01-02T03:05:05Z", 0, 61 * time.Second},
		{"2026-01-02T03:04:00Z", 3, time.Second},
		{"2026-01-02T05:00:00Z", 0, 15 * time.Minute},
		{"not a time", 1, time.Minute},
	}
	for _, tt := range tests {
		if got := RateLimitWait(tt.resetAt, tt.k, now); got != tt.want {
			t.Errorf("RateLimitWait(%q, %d) = %v, want %v", tt.resetAt, tt.k, got, tt.want)
		}
	}
}

// A paused run waits for the reported reset however far it is, else the
// backoff; never less than a second.
func TestPauseUntil(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		resetAt string
		k       int
		want    time.Time
	}{
		{"", 0, now.Add(30 * time.Second)},
		{"", 2, now.Add(2 * time.Minute)},
		{"", 9, now.Add(15 * time.Minute)},
		{"2026-01-02T08:00:00Z", 0, time.Date(2026, 1, 2, 8, 0, 1, 0, time.UTC)},
		{"2026-01-09T03:00:00Z", 3, time.Date(2026, 1, 9, 3, 0, 1, 0, time.UTC)},
		{"2026-01-02T03:00:00Z", 0, now.Add(time.Second)},
		{"soon", 1, now.Add(time.Minute)},
	}
	for _, tt := range tests {
		if got := PauseUntil(ClassRateLimit, tt.resetAt, tt.k, now); !got.Equal(tt.want) {
			t.Errorf("PauseUntil(%q, %d) = %v, want %v", tt.resetAt, tt.k, got, tt.want)
		}
	}
}

// An outage pauses for its own backoff, 10 s doubling up to 15 minutes,
// whatever reset a report gave.
func TestPauseUntilOutage(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for k, want := range map[int]time.Duration{0: 10 * time.Second, 1: 20 * time.Second, 3: 80 * time.Second, 6: 640 * time.Second, 7: 15 * time.Minute, 50: 15 * time.Minute} {
		if got := PauseUntil(ClassOutage, "2026-01-09T03:00:00Z", k, now); !got.Equal(now.Add(want)) {
			t.Errorf("PauseUntil(outage, %d) = %v, want now + %v", k, got, want)
		}
	}
}
