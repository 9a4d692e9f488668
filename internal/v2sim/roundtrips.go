package v2sim

import (
	"slices"
	"time"
)

// RoundTrips counts the sequential round trips among calls that arrived at the given times (the
// request log's Received), with the simulator answering each after about latency: a call that
// arrived less than half a latency after the first call of a round went beside it, since a call
// sent after another's answer arrives at least one latency later. The latency lab (bench) and the
// handler tests count a click's round trips with it.
func RoundTrips(arrivals []time.Time, latency time.Duration) int {
	times := slices.Clone(arrivals)
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	rounds := 0
	var roundStart time.Time
	for _, at := range times {
		if rounds == 0 || at.Sub(roundStart) > latency/2 {
			rounds++
			roundStart = at
		}
	}
	return rounds
}
