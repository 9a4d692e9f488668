package v2sim

import (
	"testing"
	"time"
)

// TestRoundTrips: calls that arrive within half a latency of a round's first call went beside it;
// later ones waited for an answer. Order of the log does not matter.
func TestRoundTrips(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	latency := 50 * time.Millisecond
	for _, tc := range []struct {
		name     string
		arrivals []time.Time
		want     int
	}{
		{"none", nil, 0},
		{"one", []time.Time{at(0)}, 1},
		{"side by side", []time.Time{at(0), at(3), at(20)}, 1},
		{"one after the other", []time.Time{at(0), at(52), at(104)}, 3},
		{"unordered log", []time.Time{at(104), at(0), at(55), at(2)}, 3},
	} {
		if got := RoundTrips(tc.arrivals, latency); got != tc.want {
			t.Errorf("%s: %d round trips, want %d", tc.name, got, tc.want)
		}
	}
}
