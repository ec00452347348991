package agentexec

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
		if got := rateLimitWait(tt.resetAt, tt.k, now); got != tt.want {
			t.Errorf("rateLimitWait(%q, %d) = %v, want %v", tt.resetAt, tt.k, got, tt.want)
		}
	}
}
