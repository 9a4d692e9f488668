package signwatch

import (
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/workindex"
)

func awaiting(n int) []workindex.Awaiting {
	list := make([]workindex.Awaiting, n)
	for i := range list {
		list[i] = workindex.Awaiting{ContractID: int32(i + 1), Number: "C", Readers: []string{"a"}}
	}
	return list
}

// TestWatcherBudgetGrowsWithTheWatchedAndHasACeiling: one read per contract per interval, never
// more a minute than the ceiling, and every contract gets its turn.
func TestWatcherBudgetGrowsWithTheWatchedAndHasACeiling(t *testing.T) {
	for _, tc := range []struct {
		contracts, ceiling int
		wantPerMinute      float64
	}{
		{contracts: 10, ceiling: 600, wantPerMinute: 10},
		{contracts: 300, ceiling: 600, wantPerMinute: 300},
		{contracts: 1000, ceiling: 600, wantPerMinute: 600},
	} {
		s := newSchedule(time.Minute, tc.ceiling)
		start := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
		s.sync(start, awaiting(tc.contracts))
		if got := s.budgetPerMinute(); got != tc.wantPerMinute {
			t.Errorf("%d contracts: budget %v a minute, want %v", tc.contracts, got, tc.wantPerMinute)
		}
		tick := time.Second
		readAt := map[int32][]time.Time{}
		perMinute := map[int]int{}
		for now := start; now.Before(start.Add(5 * time.Minute)); now = now.Add(tick) {
			for _, id := range s.due(now, tick) {
				readAt[id] = append(readAt[id], now)
				perMinute[int(now.Sub(start)/time.Minute)]++
				s.read(id, now)
			}
		}
		for minute, n := range perMinute {
			if float64(n) > tc.wantPerMinute {
				t.Errorf("%d contracts: minute %d cost %d reads, budget %v", tc.contracts, minute, n, tc.wantPerMinute)
			}
		}
		// Every contract is read, and again within the time the budget allows for all of them.
		cycle := time.Duration(float64(tc.contracts)/tc.wantPerMinute*float64(time.Minute)) + 2*tick
		for id := int32(1); id <= int32(tc.contracts); id++ {
			times := readAt[id]
			if len(times) < 2 {
				t.Fatalf("%d contracts: contract %d read %d times in 5 minutes", tc.contracts, id, len(times))
			}
			for i := 1; i < len(times); i++ {
				if gap := times[i].Sub(times[i-1]); gap > cycle+time.Minute/2 {
					t.Errorf("%d contracts: contract %d waited %v between reads (cycle %v)", tc.contracts, id, gap, cycle)
				}
			}
		}
	}
}

// TestWatcherBacksOffWhileTheServiceFails: a v2 API failing for a minute costs a handful of reads,
// and the reads resume at the pace of the budget once it answers.
func TestWatcherBacksOffWhileTheServiceFails(t *testing.T) {
	s := newSchedule(time.Minute, 600)
	start := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	s.sync(start, awaiting(100))
	tick := 100 * time.Millisecond
	failing := 0
	for now := start; now.Before(start.Add(time.Minute)); now = now.Add(tick) {
		for range s.due(now, tick) {
			failing++
			s.pause(now)
		}
	}
	if failing > 6 {
		t.Errorf("a minute of failures cost %d reads, want at most 6 (5 s doubling)", failing)
	}
	if failing < 3 {
		t.Errorf("a minute of failures tried only %d times: the watch would not notice the service is back", failing)
	}
	// The service answers again: after the pause, reads go on and the back-off resets.
	resumed := 0
	for now := start.Add(time.Minute); now.Before(start.Add(3 * time.Minute)); now = now.Add(tick) {
		for _, id := range s.due(now, tick) {
			resumed++
			s.read(id, now)
		}
	}
	if resumed < 100 {
		t.Errorf("after the outage only %d reads in two minutes for 100 contracts", resumed)
	}
	if s.backoff != 0 {
		t.Errorf("back-off %v after successful reads", s.backoff)
	}
}

// TestWatcherSpreadsAndForgets: new contracts are spread over one interval (the first at once),
// those no longer listed leave, a contract whose readers are all refused leaves.
func TestWatcherSpreadsAndForgets(t *testing.T) {
	s := newSchedule(time.Minute, 600)
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	s.sync(now, awaiting(4))
	want := []time.Duration{0, 15 * time.Second, 30 * time.Second, 45 * time.Second}
	for i, d := range want {
		if got := s.entries[int32(i+1)].nextAt.Sub(now); got != d {
			t.Errorf("contract %d first read after %v, want %v", i+1, got, d)
		}
	}
	s.sync(now, awaiting(2))
	if len(s.entries) != 2 {
		t.Errorf("%d watched after two left the list, want 2", len(s.entries))
	}
	s.entries[1].readers = []string{"a", "b"}
	s.notReadable(1, "a")
	if got := s.entries[1].readers; len(got) != 1 || got[0] != "b" {
		t.Errorf("readers after a was refused: %v", got)
	}
	s.notReadable(1, "b")
	if _, ok := s.entries[1]; ok {
		t.Error("a contract no reader may read is still watched")
	}
	s.answered(2)
	if len(s.entries) != 0 {
		t.Errorf("an answered contract is still watched: %v", s.entries)
	}
}
