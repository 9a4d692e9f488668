// Package quota bounds what one user may have running at once on a replica (exports and
// spreadsheet reads in flight): work a person starts and waits for, so a script or an impatient
// double click cannot tie up a replica's CPU and memory with copies of it.
package quota

import "sync"

// InFlight counts each user's operations in flight against a maximum.
type InFlight struct {
	max int

	mu     sync.Mutex
	counts map[string]int
}

// NewInFlight allows limit operations in flight per user (at least 1).
func NewInFlight(limit int) *InFlight {
	return &InFlight{max: max(limit, 1), counts: map[string]int{}}
}

// Acquire takes one of user's slots: ok is false when all are taken; release gives the slot back
// (call it once, when the operation ends).
func (q *InFlight) Acquire(user string) (release func(), ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.counts[user] >= q.max {
		return nil, false
	}
	q.counts[user]++
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			if q.counts[user]--; q.counts[user] <= 0 {
				delete(q.counts, user)
			}
		})
	}, true
}
