package signwatch

import (
	"cmp"
	"slices"
	"time"

	"github.com/cpqportal/portal/internal/workindex"
)

// schedule decides which contracts are read when, within the budget. It is plain data driven by
// the clock it is given (Run's, or a test's), touched by one goroutine.
type schedule struct {
	interval     time.Duration
	maxPerMinute int
	entries      map[int32]*entry

	allowance   float64 // reads the pace allows now (a token bucket)
	filledAt    time.Time
	lastMinute  []time.Time // when the reads of the last minute were taken, oldest first
	pausedUntil time.Time
	backoff     time.Duration
}

// entry is one watched contract.
type entry struct {
	number  string
	readers []string // person keys, in the order to try
	nextAt  time.Time
}

func newSchedule(interval time.Duration, maxPerMinute int) *schedule {
	return &schedule{interval: interval, maxPerMinute: maxPerMinute, entries: map[int32]*entry{}}
}

// sync makes the watched set the listed one: new contracts are spread over one interval from now
// (the first at once), those no longer listed leave.
func (s *schedule) sync(now time.Time, list []workindex.Awaiting) {
	listed := make(map[int32]bool, len(list))
	var fresh []workindex.Awaiting
	for _, a := range list {
		listed[a.ContractID] = true
		if e, ok := s.entries[a.ContractID]; ok {
			e.number, e.readers = a.Number, a.Readers
			continue
		}
		fresh = append(fresh, a)
	}
	for id := range s.entries {
		if !listed[id] {
			delete(s.entries, id)
		}
	}
	for i, a := range fresh {
		s.entries[a.ContractID] = &entry{number: a.Number, readers: a.Readers,
			nextAt: now.Add(s.interval * time.Duration(i) / time.Duration(len(fresh)))}
	}
}

// budgetPerMinute is how many reads a minute the watched set may cost: one per contract per
// interval, at most maxPerMinute.
func (s *schedule) budgetPerMinute() float64 {
	n := float64(len(s.entries)) * float64(time.Minute) / float64(s.interval)
	return min(n, float64(s.maxPerMinute))
}

// due takes the contracts whose turn came, oldest turn first, as many as the budget allows now;
// tick is how often due is asked. The reads are paced (a bucket that holds at most one tick's
// share) and no minute, counted from any moment, has more than the budget.
func (s *schedule) due(now time.Time, tick time.Duration) []int32 {
	if now.Before(s.pausedUntil) || len(s.entries) == 0 {
		s.filledAt = now
		return nil
	}
	perSecond := s.budgetPerMinute() / 60
	if !s.filledAt.IsZero() {
		s.allowance += now.Sub(s.filledAt).Seconds() * perSecond
	}
	s.filledAt = now
	s.allowance = min(s.allowance, max(1, perSecond*tick.Seconds()))
	var ids []int32
	for id, e := range s.entries {
		if !e.nextAt.After(now) {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, func(a, b int32) int {
		if c := s.entries[a].nextAt.Compare(s.entries[b].nextAt); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	// And never more in any minute than the budget, whatever the bucket held.
	for len(s.lastMinute) > 0 && now.Sub(s.lastMinute[0]) >= time.Minute {
		s.lastMinute = s.lastMinute[1:]
	}
	budget := max(1, int(s.budgetPerMinute()))
	n := max(0, min(len(ids), int(s.allowance), budget-len(s.lastMinute)))
	s.allowance -= float64(n)
	for range n {
		s.lastMinute = append(s.lastMinute, now)
	}
	return ids[:n]
}

// read: the contract was read and recorded; its next turn is one interval on.
func (s *schedule) read(id int32, now time.Time) {
	if e, ok := s.entries[id]; ok {
		e.nextAt = now.Add(s.interval)
	}
	s.backoff = 0
}

// answered: the contract left "out for signature"; it leaves the watch.
func (s *schedule) answered(id int32) {
	delete(s.entries, id)
	s.backoff = 0
}

// notReadable: this reader may not read the contract; the next reader tries at once, and without
// readers the contract leaves the watch (until someone who may read it reads it again).
func (s *schedule) notReadable(id int32, reader string) {
	e, ok := s.entries[id]
	if !ok {
		return
	}
	e.readers = slices.DeleteFunc(e.readers, func(k string) bool { return k == reader })
	if len(e.readers) == 0 {
		delete(s.entries, id)
	}
}

// pause: the v2 API (or the state database) could not answer; every read waits, longer each time.
func (s *schedule) pause(now time.Time) {
	if s.backoff == 0 {
		s.backoff = firstBackoff
	} else {
		s.backoff = min(2*s.backoff, maxBackoff)
	}
	s.pausedUntil = now.Add(s.backoff)
}
